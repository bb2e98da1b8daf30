// A page of each agent's learning jobs, newest first (by queuedAt descending, then id): those
// after the key $after ([queuedAt, id], or null), at most $first + 1 (ids; find_learning_jobs
// has the rest).
UNWIND $agents AS aid
// (the plan starts from the index seek on a; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (a:Agent {id: aid})-[:IN_ORG]->({id: $org})
USING INDEX a:Agent(id)
CALL (a) {
  MATCH (j:LearningJob)-[:FOR_AGENT]->(a)
  WHERE $after IS NULL OR j.queuedAt < $after[0] OR (j.queuedAt = $after[0] AND j.id > $after[1])
  WITH j ORDER BY j.queuedAt DESC, j.id LIMIT $first + 1
  RETURN collect(j.id) AS jobs
}
RETURN aid, jobs
