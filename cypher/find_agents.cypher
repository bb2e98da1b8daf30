UNWIND $ids AS id
MATCH (a:Agent {id: id})-[:IN_ORG]->(:Org {id: $org})
RETURN a {.id, .name, .shared, .model, .createdAt} AS agent
