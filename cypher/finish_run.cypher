// A run that applied nothing: it failed (S11: its items stay unprocessed; TRIED records what it
// tried to read), was skipped (generate turned off), or had nothing to read. Only a run still
// running as the claim that ends it ($attempt) ends so, read under its lock: a worker whose
// lease ran out while its model worked finds the run ended, or claimed again, by another, and
// changes nothing of it (no row). A run that
// read what an erasure reached while its model worked (its session, an item it tried) keeps no
// error, as the erasure leaves it: the error may quote what the model read. The items it tried
// are locked before that is read (and before the run, as finish_learning_job takes them), so
// an erasure going through them meanwhile has committed by then (a fork's run tries its
// source's items, and an erasure empties an item its person wrote in another's session under
// the item's own lock). A run seen claimed by another attempt already locks nothing.
MATCH (held:Run {id: $run})
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
MATCH (r:Run {id: $run})
WHERE r.status = 'running' AND r.attempts = $attempt
SET r.status = $status, r.finishedAt = $now, r.leaseUntil = null,
    r.error = CASE
      WHEN coalesce(r.erased, false)
        OR EXISTS { MATCH (i:Item) WHERE i.uid IN $tried AND coalesce(i.erased, false) }
      THEN null ELSE $error END
WITH r
CALL (r) {
  UNWIND $tried AS uid
  MATCH (i:Item {uid: uid})
  MERGE (r)-[:TRIED]->(i)
}
RETURN r.id AS id
