// Which of $ids are already items on the branch that ends at the session's head, and their turn.
// An item keeps the session it was added in; the branch holds items of this session and of the
// sessions it was forked from. The item index finds the candidates, and a walk back from the
// head, stopping at the candidate's depth, tells whether it is on the branch: no walk of the
// whole history.
MATCH (s:Session {id: $id})-[:HEAD]->(h:Version)
CALL (s) {
  MATCH (s)-[:FORKED_FROM*0..]->(src:Session)
  RETURN collect(src.id) AS lineage
}
UNWIND $ids AS cid
MATCH (added:Version)-[:ADDS]->(i:Item {id: cid})
WHERE i.session IN lineage AND added.depth <= h.depth
  AND EXISTS { MATCH (h) ((:Version)-[:PARENT]->(older:Version) WHERE older.depth >= added.depth)* (added) }
OPTIONAL MATCH (i)-[:IN_TURN]->(t:Turn)
RETURN i.id AS id, i.uid AS uid, t.id AS turn, i.type AS type, i.role AS role,
       i.content AS content
