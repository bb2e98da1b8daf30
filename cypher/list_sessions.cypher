// The org's sessions, or one agent's when $agent is set, oldest first.
MATCH (s:Session)-[:OF_AGENT]->(a:Agent)-[:IN_ORG]->(:Org {id: $org})
WHERE ($agent IS NULL OR a.id = $agent)
  AND ($person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) })
RETURN s.id AS id
ORDER BY s.createdAt, s.id
SKIP $offset LIMIT $limit
