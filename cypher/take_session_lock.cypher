// Take the session's write lock where the caller may reach it, and read nothing else: for a
// statement run after it that checks, under the lock, all it needs itself (record_turn's
// guards, when a turn was decided before the lock).
// (the plan starts from the index seek on s; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (s:Session {id: $id})-[:OF_AGENT]->(:Agent)-[:IN_ORG]->({id: $org})
USING INDEX s:Session(id)
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
SET s._lock = true
REMOVE s._lock
RETURN s.id AS locked
