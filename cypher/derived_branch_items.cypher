// The derivation that the kept ledger replaces (test only: tests/memory/test_kept_state.py).
// Every item on the branch that ends at the session's head, oldest first, and whether a
// consolidation on that branch has read it.
MATCH (:Session {id: $id})-[:HEAD]->(h:Version)
CALL (h) {
  OPTIONAL MATCH (h)-[:PARENT*0..]->(:Version)<-[:AT]-(:Run)-[:READ]->(done:Item)
  RETURN collect(DISTINCT done.uid) AS done
}
MATCH (h)-[:PARENT*0..]->(:Version)-[:ADDS]->(i:Item)
OPTIONAL MATCH (i)-[:IN_TURN]->(t:Turn)
RETURN i {.uid, .id, .type, .role, .content, .app, .author, .at, .seq, turn: t.id} AS item,
       i.uid IN done AS processed
ORDER BY i.seq
