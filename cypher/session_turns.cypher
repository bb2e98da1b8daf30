// A page of each session's turns, oldest first (by time, then id), on whatever branch they were
// recorded: those after the key $after ([at, id], or null), at most $first + 1 (ids; find_turns
// has the rest).
UNWIND $ids AS sid
// (the plan starts from the index seek on s; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (s:Session {id: sid})-[:OF_AGENT]->(:Agent)-[:IN_ORG]->({id: $org})
USING INDEX s:Session(id)
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
CALL (s) {
  MATCH (t:Turn)-[:IN_SESSION]->(s)
  WHERE $after IS NULL OR t.at > $after[0] OR (t.at = $after[0] AND t.id > $after[1])
  WITH t ORDER BY t.at, t.id LIMIT $first + 1
  RETURN collect(t.id) AS turns
}
RETURN sid, turns
