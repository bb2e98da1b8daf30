// S7, S9: applies the changes that passed the checks to the newest memory as one new version,
// marks the items read as processed, and records what was kept and dropped, and why. It keeps
// the session's state: each kept change becomes its entry's CURRENT one (and the entry keeps
// its state: see session_views), and the
// items read join the processed ledger ($read is in timeline order, after the ledger's mark).
MATCH (s:Session {id: $id})-[hr:HEAD]->(h:Version)
MATCH (r:Run {id: $run.id})
CREATE (v:Version {id: $run.head, depth: h.depth + 1, items: h.items, cause: 'consolidation',
                   at: $run.at, revision: s.revision + 1})
CREATE (v)-[:PARENT]->(h)
CREATE (v)-[:OF]->(s)
CREATE (r)-[:AT]->(v)
SET r.status = 'succeeded', r.finishedAt = $run.at, r.head = $run.head, r.error = null,
    r.leaseUntil = null,
    r.kept = size($kept), r.dropped = size($dropped)
DELETE hr
CREATE (s)-[:HEAD]->(v)
SET s.revision = s.revision + 1,
    s.processed = coalesce(s.processed, []) + $readIds,
    s.processedSeq = $readSeq
WITH s, v, r
CALL (r) {
  UNWIND $read AS uid
  MATCH (i:Item {uid: uid})
  CREATE (r)-[:READ]->(i)
}
CALL (s, v, r) {
  UNWIND $kept AS k
  OPTIONAL MATCH (prev:Change {id: k.replaces})
  CREATE (c:Change {id: k.id, op: k.op, maker: 'consolidation', key: k.key, content: k.content,
                    kind: k.kind, status: k.status, at: $run.at, beforeContent: prev.content,
                    beforeKind: prev.kind, beforeStatus: prev.status, revision: s.revision,
                    head: v.id, run: r.id, model: r.model})
  CREATE (c)-[:AT]->(v)
  CREATE (c)-[:MADE_BY]->(r)
  CREATE (c)-[:IN_SESSION]->(s)
  FOREACH (x IN CASE WHEN prev IS NULL THEN [] ELSE [prev] END | CREATE (c)-[:REPLACES]->(x))
  MERGE (e:Entry {session: s.id, key: k.key})
    ON CREATE SET e.createdAt = $run.at
  MERGE (s)-[:HAS_ENTRY]->(e)
  CREATE (c)-[:OF_ENTRY]->(e)
  WITH c, k, e
  CALL (e) {
    OPTIONAL MATCH (e)-[now:CURRENT]->(:Change)
    DELETE now
  }
  CREATE (e)-[:CURRENT]->(c)
  WITH c, k, e
  CALL (c, k) {
    UNWIND k.sources AS src
    MATCH (i:Item {uid: src})
    CREATE (c)-[:CITES]->(i)
    WITH i ORDER BY i.seq
    RETURN collect(i.id) AS sources, collect(i.uid) AS sourceUids
  }
  SET e.content = c.content, e.kind = c.kind, e.status = c.status, e.updatedAt = c.at,
      e.change = c.id, e.sources = sources, e.sourceUids = sourceUids
}
CALL (r) {
  UNWIND $dropped AS d
  CREATE (r)-[:DROPPED]->(:DroppedChange {op: d.op, key: d.key, reason: d.reason,
                                          proposal: d.proposal, at: $run.at})
}
RETURN v.id AS head
