MATCH (r:Run {id: $run})-[:FOR_SESSION]->(s:Session)-[:OF_AGENT]->(a:Agent)-[:IN_ORG]->(o:Org)
RETURN r {.id, .model, .status, .trigger} AS run, s.id AS session, a.id AS agent, o.id AS org
