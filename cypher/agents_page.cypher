// A page of the org's agents, oldest first (by createdAt, then id): those after the key $after
// ([createdAt, id], or null), at most $first + 1.
MATCH (a:Agent)-[:IN_ORG]->(:Org {id: $org})
WHERE $after IS NULL OR a.createdAt > $after[0] OR (a.createdAt = $after[0] AND a.id > $after[1])
RETURN a {.id, .name, .shared, .model, .createdAt} AS agent
ORDER BY a.createdAt, a.id
LIMIT $first + 1
