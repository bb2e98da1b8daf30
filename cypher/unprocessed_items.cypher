// The items consolidation may read at the session's head, oldest first: those after the
// processed ledger's mark (`processedSeq`, the timeline position through which runs on this
// branch have read), except a person's memory edits. The walk back from the head stops at the
// mark: it visits only the versions that added such items, however long the history.
MATCH (s:Session {id: $id})-[:HEAD]->(h:Version)
WITH s, h, coalesce(s.processedSeq, 0) AS mark
MATCH (h) ((:Version)-[:PARENT]->(older:Version) WHERE older.items > mark)* (v:Version)
MATCH (v)-[:ADDS]->(i:Item)
WHERE i.seq > mark AND i.type <> 'memory_edit'
OPTIONAL MATCH (i)-[:IN_TURN]->(t:Turn)
RETURN i {.uid, .id, .type, .role, .content, .app, .author, .at, .seq, turn: t.id,
          erased: coalesce(i.erased, false), expired: coalesce(i.expired, false)} AS item
ORDER BY i.seq
