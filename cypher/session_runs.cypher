// Each session's consolidation runs, newest first (ids; find_runs has the rest).
UNWIND $ids AS sid
// (the plan starts from the index seek on s; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (s:Session {id: sid})-[:OF_AGENT]->(:Agent)-[:IN_ORG]->({id: $org})
USING INDEX s:Session(id)
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
MATCH (r:Run)-[:FOR_SESSION]->(s)
WITH sid, r ORDER BY r.queuedAt DESC, r.id
RETURN sid, collect(r.id) AS runs
