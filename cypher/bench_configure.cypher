// Benchmark floor (bench/run), not used by the service: the least graph work a Configure
// needs, as one statement: lock the session, check its head and revision, set the override,
// and count the revision.
MATCH (s:Session {id: $id})-[:OF_AGENT]->(:Agent)-[:IN_ORG]->(:Org {id: $org})
SET s._lock = true
REMOVE s._lock
WITH s
MATCH (s)-[:HEAD]->(h:Version)
WHERE h.id = $expected AND s.revision = $revision
SET s.generateOverride = $generate, s.revision = s.revision + 1
RETURN h.id AS head, s.revision AS revision
