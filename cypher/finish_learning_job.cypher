// A learning job's end: succeeded, failed (its error kept; the items it TRIED stay to learn,
// S11 for agents) or skipped (agent memory off, or no helper model).
MATCH (j:LearningJob {id: $job})
SET j.status = $status, j.error = $error, j.finishedAt = $now, j.leaseUntil = null,
    j.model = coalesce($model, j.model)
WITH j
CALL (j) {
  UNWIND $tried AS uid
  MATCH (i:Item {uid: uid})
  MERGE (j)-[:TRIED]->(i)
}
RETURN j.id AS id
