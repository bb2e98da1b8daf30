// A page of each agent's sessions the caller may reach, oldest first (by createdAt, then id):
// those after the key $after ([createdAt, id], or null), at most $first + 1.
UNWIND $agents AS aid
// (the plan starts from the index seek on a; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (a:Agent {id: aid})-[:IN_ORG]->({id: $org})
USING INDEX a:Agent(id)
CALL (a) {
  MATCH (s:Session)-[:OF_AGENT]->(a)
  WHERE ($person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) })
    AND ($after IS NULL OR s.createdAt > $after[0]
         OR (s.createdAt = $after[0] AND s.id > $after[1]))
  WITH s ORDER BY s.createdAt, s.id LIMIT $first + 1
  RETURN collect(s.id) AS ids
}
RETURN aid, ids
