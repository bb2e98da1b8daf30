// A learning job's end: succeeded, failed (its error kept; the items it TRIED stay to learn,
// S11 for agents) or skipped (agent memory off, or no helper model). Only a job still running
// ends so, read under its lock: a worker whose lease ran out while its model worked finds the
// job ended (or claimed again) by another, and changes nothing of it. A job that read what an
// erasure reached while its model worked (a session it learned from, an item it tried) keeps
// no error, as the erasure leaves it: the error may quote what the model read. The items it
// tried are locked before that is read (and before the job: an erasure takes them in that
// order), so an erasure going through them meanwhile has committed by then.
MATCH (held:LearningJob {id: $job})
CALL (held) {
  UNWIND $tried AS uid
  WITH uid ORDER BY uid
  MATCH (i:Item {uid: uid})
  SET i._lock = true
  REMOVE i._lock
}
SET held._lock = true
REMOVE held._lock
WITH held
MATCH (j:LearningJob {id: $job})
WHERE j.status = 'running'
CALL (j) {
  UNWIND $tried AS uid
  MATCH (i:Item {uid: uid})
  MERGE (j)-[:TRIED]->(i)
}
SET j.status = $status, j.finishedAt = $now, j.leaseUntil = null,
    j.model = coalesce($model, j.model),
    j.error = CASE
      WHEN EXISTS { (j)-[:FROM_SESSION]->(s:Session) WHERE coalesce(s.erased, false) }
        OR EXISTS { MATCH (tried:Item) WHERE tried.uid IN $tried AND coalesce(tried.erased, false) }
      THEN null ELSE $error END
RETURN j.id AS id
