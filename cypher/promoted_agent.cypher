MATCH (a:Agent)-[:PROMOTED_FROM]->(:Session {id: $session})
RETURN a.id AS id
