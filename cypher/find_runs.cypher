// Consolidation runs by id: status, model, error, the turn, and what they read, kept, dropped.
UNWIND $ids AS rid
// (the plan starts from the index seek on r; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (r:Run {id: rid})-[:FOR_SESSION]->(s:Session)-[:OF_AGENT]->(:Agent)-[:IN_ORG]->({id: $org})
USING INDEX r:Run(id)
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
OPTIONAL MATCH (r)-[:FOR_TURN]->(t:Turn)
CALL (r) {
  OPTIONAL MATCH (r)-[:READ]->(i:Item)
  WITH i ORDER BY i.seq
  RETURN collect(i.id) AS read
}
CALL (r) {
  OPTIONAL MATCH (r)-[:TRIED]->(i:Item)
  WITH i ORDER BY i.seq
  RETURN collect(i.id) AS tried
}
CALL (r) {
  OPTIONAL MATCH (c:Change)-[:MADE_BY]->(r)
  WITH c ORDER BY c.key
  RETURN collect(c.id) AS kept
}
CALL (r) {
  OPTIONAL MATCH (r)-[:DROPPED]->(d:DroppedChange)
  WITH d ORDER BY d.key, d.reason
  RETURN collect(d {.op, .key, .reason, .proposal}) AS dropped
}
RETURN r {.id, .status, .model, .trigger, .error, .queuedAt, .startedAt, .finishedAt, .attempts,
          .head, session: s.id, turn: t.id, read: read, tried: tried, kept: kept,
          dropped: dropped} AS run
