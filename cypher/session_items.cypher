// A page of each session's timeline: the items on the branch that ends at its head.
UNWIND $ids AS sid
MATCH (s:Session {id: sid})-[:OF_AGENT]->(:Agent)-[:IN_ORG]->(:Org {id: $org})
MATCH (s)-[:HEAD]->(h:Version)
CALL (h) {
  MATCH (h)-[:PARENT*0..]->(:Version)-[:ADDS]->(i:Item)
  OPTIONAL MATCH (i)-[:IN_TURN]->(t:Turn)
  WITH i, t ORDER BY i.seq SKIP $offset LIMIT $limit
  RETURN collect(i {.uid, .id, .type, .role, .content, .app, .author, .at, .seq, turn: t.id}) AS items
}
RETURN sid, items
