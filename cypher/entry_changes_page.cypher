// A page of each entry's story, newest change first: following REPLACES from the entry's
// current change (or, with $after, from the last change the previous page showed, which is then
// left out), at most $first + 1 changes, with what each cites and what made it. The cursor is a
// position in the chain itself, so a change made between two pages (a new head of the chain)
// shifts nothing. 201 is the largest page (MAX_PAGE) + 1: the walk never goes further.
// An $after that is no change of the entry's story (another list's cursor) answers null. Who
// may read is checked on the entry's own change: a story runs on through a fork's source, also
// one deleted since.
UNWIND $ids AS cid
// (the plan starts from the index seek on top; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (top:Change {id: cid})-[:IN_SESSION]->(ss:Session)-[:OF_AGENT]->(:Agent)
      -[:IN_ORG]->({id: $org})
USING INDEX top:Change(id)
WHERE $person IS NULL OR EXISTS { (ss)-[:WITH]->(:Person {id: $person}) }
MATCH (c0:Change {id: coalesce($after, cid)})
CALL (c0) {
  MATCH path = (c0)-[:REPLACES*0..201]->(c:Change)
  WHERE $after IS NULL OR length(path) > 0
  WITH c, length(path) AS depth ORDER BY depth LIMIT $first + 1
  OPTIONAL MATCH (c)-[:MADE_BY]->(maker)
  OPTIONAL MATCH (c)-[:IN_SESSION]->(s:Session)
  CALL (c) {
    OPTIONAL MATCH (c)-[:CITES]->(i:Item)
    WITH i ORDER BY i.seq
    RETURN collect(i {.uid, .id, .type, .role, .content, .app, .author, .at, .seq}) AS cites
  }
  WITH c, depth, maker, s, cites ORDER BY depth
  RETURN collect(c {.id, .op, .maker, .key, .content, .kind, .status, .at, .beforeContent,
                    .beforeKind, .beforeStatus, .revision, .head, .run, .model,
                    session: s.id, madeBy: maker.id, cites: cites}) AS changes
}
RETURN cid, CASE WHEN $after IS NULL OR EXISTS { MATCH (top)-[:REPLACES*0..]->(c0) }
                 THEN changes END AS changes
