// A page of each agent's learning jobs, newest first (by queuedAt descending, then id): those
// after the key $after ([queuedAt, id], or null), at most $first + 1 (ids; find_learning_jobs
// has the rest).
UNWIND $agents AS aid
MATCH (a:Agent {id: aid})-[:IN_ORG]->(:Org {id: $org})
CALL (a) {
  MATCH (j:LearningJob)-[:FOR_AGENT]->(a)
  WHERE $after IS NULL OR j.queuedAt < $after[0] OR (j.queuedAt = $after[0] AND j.id > $after[1])
  WITH j ORDER BY j.queuedAt DESC, j.id LIMIT $first + 1
  RETURN collect(j.id) AS jobs
}
RETURN aid, jobs
