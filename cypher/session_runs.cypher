// Each session's consolidation runs, newest first: status, model, error, what they read,
// kept and dropped.
UNWIND $ids AS sid
MATCH (s:Session {id: sid})-[:OF_AGENT]->(:Agent)-[:IN_ORG]->(:Org {id: $org})
MATCH (r:Run)-[:FOR_SESSION]->(s)
OPTIONAL MATCH (r)-[:FOR_TURN]->(t:Turn)
CALL (r) {
  OPTIONAL MATCH (r)-[:READ]->(i:Item)
  WITH i ORDER BY i.seq
  RETURN collect(i.id) AS read
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
WITH sid, r, t, read, kept, dropped ORDER BY r.queuedAt DESC, r.id
RETURN sid, collect(r {.id, .status, .model, .trigger, .error, .queuedAt, .startedAt,
                       .finishedAt, .attempts, .head, turn: t.id, read: read, kept: kept,
                       dropped: dropped}) AS runs
