// Which of $ids are already items on the branch that ends at the session's head, and their turn.
MATCH (:Session {id: $id})-[:HEAD]->(h:Version)
MATCH (h)-[:PARENT*0..]->(:Version)-[:ADDS]->(i:Item)
WHERE i.id IN $ids
OPTIONAL MATCH (i)-[:IN_TURN]->(t:Turn)
RETURN i.id AS id, i.uid AS uid, t.id AS turn, i.type AS type, i.role AS role,
       i.content AS content
