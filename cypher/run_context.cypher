MATCH (r:Run {id: $run})-[:FOR_SESSION]->(s:Session)-[:OF_AGENT]->(:Agent)-[:IN_ORG]->(o:Org)
RETURN r {.id, .model, .status, .trigger} AS run, s.id AS session, o.id AS org
