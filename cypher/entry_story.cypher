// The story of entries, newest change first, one statement for all of them: from the change
// that made each entry's current state back along REPLACES (through a fork's copy on into the
// entry it was copied from), each change with what made it (a person, a run with its model and
// turn, a fork, a promotion) and the items it cites with their turns and sessions.
UNWIND $ids AS cid
// (the plan starts from the index seek on c0; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (c0:Change {id: cid})-[:IN_SESSION]->(s0:Session)-[:OF_AGENT]->(:Agent)
      -[:IN_ORG]->({id: $org})
USING INDEX c0:Change(id)
WHERE $person IS NULL OR EXISTS { (s0)-[:WITH]->(:Person {id: $person}) }
MATCH path = (c0)-[:REPLACES*0..]->(c:Change)
WITH cid, c, length(path) AS depth
OPTIONAL MATCH (c)-[:IN_SESSION]->(s:Session)
OPTIONAL MATCH (c)-[:MADE_BY]->(maker)
OPTIONAL MATCH (c)-[:MADE_BY]->(p:Person)
OPTIONAL MATCH (c)-[:MADE_BY]->(r:Run)
OPTIONAL MATCH (r)-[:FOR_TURN]->(rt:Turn)
CALL (c) {
  OPTIONAL MATCH (c)-[:CITES]->(i:Item)
  OPTIONAL MATCH (i)-[:IN_TURN]->(t:Turn)-[:IN_SESSION]->(ts:Session)
  OPTIONAL MATCH (i)<-[:ADDS]-(:Version)-[:OF]->(origin:Session)
  WITH i, t, coalesce(ts, origin) AS its ORDER BY i.seq
  RETURN collect(CASE WHEN i IS NULL THEN null ELSE
    {item: i {.uid, .id, .type, .role, .content, .app, .author, .at, .seq},
     turn: t.id, session: its.id} END) AS cites
}
WITH cid, c, depth, s, maker, p, r, rt, cites ORDER BY depth
RETURN cid, collect({
  change: c {.id, .op, .maker, .key, .content, .kind, .status, .at, .beforeContent,
             .beforeKind, .beforeStatus, .revision, .head, .model, session: s.id,
             madeBy: maker.id},
  person: p.id, run: r.id, runModel: r.model, runTurn: rt.id, copied: c.op = 'copy',
  cites: cites}) AS story
