// A page of the org's sessions the caller may reach, or one agent's when $agent is set, oldest
// first (by createdAt, then id): those after the key $after ([createdAt, id], or null), at
// most $first + 1.
MATCH (s:Session)-[:OF_AGENT]->(a:Agent)-[:IN_ORG]->(:Org {id: $org})
WHERE ($agent IS NULL OR a.id = $agent)
  AND ($person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) })
  AND ($after IS NULL OR s.createdAt > $after[0] OR (s.createdAt = $after[0] AND s.id > $after[1]))
RETURN s.id AS id
ORDER BY s.createdAt, s.id
LIMIT $first + 1
