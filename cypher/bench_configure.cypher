// Benchmark floor (bench/run), not used by the service: the least graph work a Configure
// needs, as one statement: lock the session, check its head and revision, set the override,
// and count the revision.
// (the plan starts from the index seek on s; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (s:Session {id: $id})-[:OF_AGENT]->(:Agent)-[:IN_ORG]->({id: $org})
USING INDEX s:Session(id)
SET s._lock = true
REMOVE s._lock
WITH s
MATCH (s)-[:HEAD]->(h:Version)
WHERE h.id = $expected AND s.revision = $revision
SET s.generateOverride = $generate, s.revision = s.revision + 1
RETURN h.id AS head, s.revision AS revision
