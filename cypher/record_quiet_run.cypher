// S7, S9: a consolidation run that keeps no change: no new version (the head stays), but the
// items it read join the processed ledger, so the revision grows (as with Configure, S15), and
// what it dropped is recorded. The run is AT the head it read, so deriving the memory of that
// version (memory_at) counts the items as processed too.
MATCH (s:Session {id: $id})-[:HEAD]->(h:Version)
MATCH (r:Run {id: $run.id})
CREATE (r)-[:AT]->(h)
SET r.status = 'succeeded', r.finishedAt = $run.at, r.head = h.id, r.error = null,
    r.leaseUntil = null, r.kept = 0, r.dropped = size($dropped)
SET s.revision = s.revision + 1,
    s.processed = coalesce(s.processed, []) + $readIds,
    s.processedSeq = $readSeq
WITH s, h, r
CALL (r) {
  UNWIND $read AS uid
  MATCH (i:Item {uid: uid})
  CREATE (r)-[:READ]->(i)
}
CALL (r) {
  UNWIND $dropped AS d
  CREATE (r)-[:DROPPED]->(:DroppedChange {op: d.op, key: d.key, reason: d.reason,
                                          proposal: d.proposal, at: $run.at})
}
RETURN h.id AS head
