// A12: the agent a subagent session was promoted to; a session is promoted once.
MATCH (s:Session {id: $session})
MATCH (a:Agent {id: $agent})
CREATE (a)-[:PROMOTED_FROM {at: $at}]->(s)
RETURN a.id AS id
