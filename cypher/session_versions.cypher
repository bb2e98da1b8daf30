// Every head each session ever had, oldest first: when, what made it, what it added.
UNWIND $ids AS sid
// (the plan starts from the index seek on s; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (s:Session {id: sid})-[:OF_AGENT]->(:Agent)-[:IN_ORG]->({id: $org})
USING INDEX s:Session(id)
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
