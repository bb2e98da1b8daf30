MATCH (a:Agent)-[:IN_ORG]->(:Org {id: $org})
RETURN a {.id, .name, .shared, .model, .createdAt} AS agent
ORDER BY a.createdAt, a.id
SKIP $offset LIMIT $limit
