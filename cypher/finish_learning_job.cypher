// A learning job's end: succeeded, failed (the items it TRIED stay to learn, S11 for agents) or
// skipped (agent memory off, or no helper model). Its own error ($error) is `error`; each
// session's whose helper call failed ($failed: {session, error}) is kept apart
// (`errorSessions`, `errorParts`), so that a reader sees those of the sessions they may reach
// (A9; find_learning_jobs joins them). Only a job still running as the claim that ends it
// ($attempt) ends so, read under its lock: a worker whose lease ran out while its model worked
// finds the job ended, or claimed again, by another, and changes nothing of it (no row). A
// job that read what an erasure reached while its model worked (a session it learned from, an
// item it tried) keeps no error, as the erasure leaves it: an error may quote what the model
// read. The items it tried are locked before that is
// read (and before the job: an erasure takes them in that order), so an erasure going through
// them meanwhile has committed by then. A job seen claimed by another attempt already locks
// nothing (the claim since holds the job, and takes the items after it).
MATCH (held:LearningJob {id: $job})
WHERE held.status = 'running' AND held.attempts = $attempt
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
WHERE j.status = 'running' AND j.attempts = $attempt
CALL (j) {
  UNWIND $tried AS uid
  MATCH (i:Item {uid: uid})
  MERGE (j)-[:TRIED]->(i)
}
WITH j, EXISTS { (j)-[:FROM_SESSION]->(s:Session) WHERE coalesce(s.erased, false) }
        OR EXISTS { MATCH (tried:Item) WHERE tried.uid IN $tried AND coalesce(tried.erased, false) }
        AS reached
WITH j, reached, reached OR size($failed) = 0 AS none
SET j.status = $status, j.finishedAt = $now, j.leaseUntil = null,
    j.model = coalesce($model, j.model),
    j.error = CASE WHEN reached THEN null ELSE $error END,
    j.errorSessions = CASE WHEN none THEN null ELSE [f IN $failed | f.session] END,
    j.errorParts = CASE WHEN none THEN null ELSE [f IN $failed | f.error] END
RETURN j.id AS id
