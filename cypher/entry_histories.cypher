// Each entry's story, newest change first: the chain of REPLACES from the change that made
// its current state, with what each change cites (each item with the turn it came in) and
// what made it.
UNWIND $ids AS cid
// (the plan starts from the index seek on c0; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (c0:Change {id: cid})-[:IN_SESSION]->(ss:Session)-[:OF_AGENT]->(:Agent)-[:IN_ORG]->({id: $org})
USING INDEX c0:Change(id)
WHERE $person IS NULL OR EXISTS { (ss)-[:WITH]->(:Person {id: $person}) }
MATCH path = (c0)-[:REPLACES*0..]->(c:Change)
WITH cid, c, length(path) AS depth
OPTIONAL MATCH (c)-[:MADE_BY]->(maker)
OPTIONAL MATCH (c)-[:IN_SESSION]->(s:Session)
CALL (c) {
  OPTIONAL MATCH (c)-[:CITES]->(i:Item)
  OPTIONAL MATCH (i)-[:IN_TURN]->(t:Turn)
  WITH i, t ORDER BY i.seq
  RETURN collect(i {.uid, .id, .type, .role, .content, .app, .author, .at, .seq,
                    turn: t.id}) AS cites
}
WITH cid, c, depth, maker, s, cites ORDER BY depth
RETURN cid, collect(c {.id, .op, .maker, .key, .content, .kind, .status, .at, .beforeContent,
                       .beforeKind, .beforeStatus, .revision, .head, .run, .model,
                       session: s.id, madeBy: maker.id, cites: cites}) AS changes
