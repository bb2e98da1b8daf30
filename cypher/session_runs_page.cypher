// A page of each session's consolidation runs, newest first (by queuedAt descending, then id):
// those after the key $after ([queuedAt, id], or null), at most $first + 1 (ids; find_runs has
// the rest).
UNWIND $ids AS sid
// (the plan starts from the index seek on s; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (s:Session {id: sid})-[:OF_AGENT]->(:Agent)-[:IN_ORG]->({id: $org})
USING INDEX s:Session(id)
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
CALL (s) {
  MATCH (r:Run)-[:FOR_SESSION]->(s)
  WHERE $after IS NULL OR r.queuedAt < $after[0] OR (r.queuedAt = $after[0] AND r.id > $after[1])
  WITH r ORDER BY r.queuedAt DESC, r.id LIMIT $first + 1
  RETURN collect(r.id) AS runs
}
RETURN sid, runs
