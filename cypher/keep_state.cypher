// The kept state of the session's head, as derived from its history (memory_at):
// each key's CURRENT change ($state.changes) and the processed ledger. Used where the head
// becomes an old version's (a revert), and to fill it in for sessions made before it was kept.
// An entry of a key that the state does not have has no CURRENT change. The revision grows
// by $moves: 1 where nothing else counted the change (filling it in: a view read before it
// showed no entries, and a process may keep that view, app/memory/kept.py), 0 after a revert.
MATCH (s:Session {id: $id})
SET s.processed = $state.processed, s.processedSeq = $state.processedSeq,
    s.revision = s.revision + $moves
WITH s
CALL (s) {
  MATCH (s)-[:HAS_ENTRY]->(:Entry)-[now:CURRENT]->(:Change)
  DELETE now
}
CALL (s) {
  UNWIND $state.changes AS cid
  MATCH (c:Change {id: cid})
  MERGE (e:Entry {session: s.id, key: c.key})
    ON CREATE SET e.createdAt = c.at
  MERGE (s)-[:HAS_ENTRY]->(e)
  CREATE (e)-[:CURRENT]->(c)
}
RETURN s.id AS id
