// A run that applied nothing: it failed (S11: its items stay unprocessed; TRIED records what it
// tried to read), was skipped (generate turned off), or had nothing to read. Only a run still
// running as the claim that ends it ($attempt) ends so, read under its lock: a worker whose
// lease ran out while its model worked finds the run ended, or claimed again, by another, and
// changes nothing of it (no row). A run that
// read what an erasure reached while its model worked (its session, an item it tried) keeps no
// error, as the erasure leaves it: the error may quote what the model read.
MATCH (r:Run {id: $run})
SET r._lock = true
REMOVE r._lock
WITH r
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
