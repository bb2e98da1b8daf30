// Each session's consolidation runs, newest first (ids; find_runs has the rest).
UNWIND $ids AS sid
MATCH (s:Session {id: sid})-[:OF_AGENT]->(:Agent)-[:IN_ORG]->(:Org {id: $org})
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
MATCH (r:Run)-[:FOR_SESSION]->(s)
WITH sid, r ORDER BY r.queuedAt DESC, r.id
RETURN sid, collect(r.id) AS runs
