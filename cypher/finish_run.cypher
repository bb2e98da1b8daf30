// A run that applied nothing: it failed (S11: its items stay unprocessed; TRIED records what it
// tried to read), was skipped (generate turned off), or had nothing to read.
MATCH (r:Run {id: $run})
SET r.status = $status, r.error = $error, r.finishedAt = $now, r.leaseUntil = null
WITH r
CALL (r) {
  UNWIND $tried AS uid
  MATCH (i:Item {uid: uid})
  MERGE (r)-[:TRIED]->(i)
}
RETURN r.id AS id
