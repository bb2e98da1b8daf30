// Going back: a new head whose parent is the old version, so history and memory are what
// they were there. Nothing is destroyed: the abandoned branch stays, linked by REVERTED_FROM.
// The kept state (issue 12) becomes the old version's, as derived from its history: each key's
// CURRENT change ($revert.changes, from memory_at) and the processed ledger. An entry of a key
// that the old version did not have has no CURRENT change.
MATCH (s:Session {id: $id})-[hr:HEAD]->(h:Version)
MATCH (t:Version {id: $revert.to})
CREATE (v:Version {id: $revert.head, depth: t.depth + 1, items: t.items, cause: 'revert',
                   at: $revert.at, revision: s.revision + 1})
CREATE (v)-[:PARENT]->(t)
CREATE (v)-[:OF]->(s)
CREATE (v)-[:REVERTED_FROM]->(h)
DELETE hr
CREATE (s)-[:HEAD]->(v)
SET s.revision = s.revision + 1, s.processed = $revert.processed,
    s.processedSeq = $revert.processedSeq
WITH s, v
CALL (s) {
  MATCH (s)-[:HAS_ENTRY]->(:Entry)-[now:CURRENT]->(:Change)
  DELETE now
}
CALL (s) {
  UNWIND $revert.changes AS cid
  MATCH (c:Change {id: cid})
  MERGE (e:Entry {session: s.id, key: c.key})
    ON CREATE SET e.createdAt = c.at
  MERGE (s)-[:HAS_ENTRY]->(e)
  CREATE (e)-[:CURRENT]->(c)
}
RETURN v.id AS head
