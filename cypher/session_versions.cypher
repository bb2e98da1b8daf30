// Every head each session ever had, oldest first: when, what made it, what it added.
UNWIND $ids AS sid
MATCH (s:Session {id: sid})-[:OF_AGENT]->(:Agent)-[:IN_ORG]->(:Org {id: $org})
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
MATCH (s)-[:HEAD]->(head:Version)
MATCH (v:Version)-[:OF]->(s)
OPTIONAL MATCH (v)-[:PARENT]->(parent:Version)
OPTIONAL MATCH (v)-[:REVERTED_FROM]->(left:Version)
CALL (v) {
  OPTIONAL MATCH (v)-[:ADDS]->(i:Item)
  WITH i ORDER BY i.seq
  RETURN collect(i.id) AS added
}
WITH sid, head, v, parent, left, added ORDER BY v.at, v.depth
RETURN sid, collect(v {.id, .cause, .at, .depth, parent: parent.id, revertedFrom: left.id,
                       added: added, current: v = head}) AS versions
