// A page of the timeline as it was at each version: the items on the branch that ends there.
UNWIND $versions AS vid
MATCH (h:Version {id: vid})-[:OF]->(ss:Session)-[:OF_AGENT]->(:Agent)-[:IN_ORG]->(:Org {id: $org})
WHERE $person IS NULL OR EXISTS { (ss)-[:WITH]->(:Person {id: $person}) }
CALL (h) {
  MATCH (h)-[:PARENT*0..]->(:Version)-[:ADDS]->(i:Item)
  OPTIONAL MATCH (i)-[:IN_TURN]->(t:Turn)
  WITH i, t ORDER BY i.seq SKIP $offset LIMIT $limit
  RETURN collect(i {.uid, .id, .type, .role, .content, .app, .author, .at, .seq, turn: t.id}) AS items
}
RETURN vid, items
