// The kept state of the session's head, as derived from its history (memory_at):
// each key's CURRENT change ($state.changes), the state each entry keeps of it (see
// session_views), and the processed ledger. Used where the head becomes an old version's (a
// revert), and to fill it in for sessions made before it was kept. An entry of a key that the
// state does not have has no CURRENT change and keeps no state. The revision grows
// by $moves: 1 where nothing else counted the change (filling it in: a view read before it
// showed no entries, and a process may keep that view, app/memory/sessions/kept.py), 0 after a revert.
MATCH (s:Session {id: $id})
SET s.processed = $state.processed, s.processedSeq = $state.processedSeq,
    s.revision = s.revision + $moves
WITH s
CALL (s) {
  MATCH (s)-[:HAS_ENTRY]->(e:Entry)
  OPTIONAL MATCH (e)-[now:CURRENT]->(:Change)
  DELETE now
  REMOVE e.content, e.kind, e.status, e.updatedAt, e.change, e.sources, e.sourceUids
}
CALL (s) {
  UNWIND $state.changes AS cid
  MATCH (c:Change {id: cid})
  MERGE (e:Entry {session: s.id, key: c.key})
    ON CREATE SET e.createdAt = c.at
  MERGE (s)-[:HAS_ENTRY]->(e)
  CREATE (e)-[:CURRENT]->(c)
  WITH c, e
  CALL (c) {
    OPTIONAL MATCH (c)-[:CITES]->(i:Item)
    WITH i ORDER BY i.seq
    RETURN collect(i.id) AS sources, collect(i.uid) AS sourceUids
  }
  SET e.content = c.content, e.kind = c.kind, e.status = c.status, e.updatedAt = c.at,
      e.change = c.id, e.sources = sources, e.sourceUids = sourceUids
}
RETURN s.id AS id
