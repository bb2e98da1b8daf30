// Learning jobs by id: status, model, error, the items read (with their sessions), and the
// changes kept and dropped, and why. Another member's private changes and the items of
// sessions the reader may not reach are left out (A9).
UNWIND $ids AS jid
// (the plan starts from the index seek on j; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (j:LearningJob {id: jid})-[:FOR_AGENT]->(:Agent)-[:IN_ORG]->({id: $org})
USING INDEX j:LearningJob(id)
CALL (j) {
  OPTIONAL MATCH (j)-[:LEARNED]->(i:Item)<-[:ADDS]-(:Version)-[:OF]->(s:Session)
  WHERE $all OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
  WITH i ORDER BY i.seq
  RETURN collect(i.id) AS read
}
CALL (j) {
  OPTIONAL MATCH (j)-[:TRIED]->(i:Item)<-[:ADDS]-(:Version)-[:OF]->(s:Session)
  WHERE $all OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
  WITH i ORDER BY i.seq
  RETURN collect(i.id) AS tried
}
CALL (j) {
  OPTIONAL MATCH (c:AgentChange)-[:MADE_BY]->(j)
  WHERE $all OR c.owner = '' OR c.owner = $person
  WITH c ORDER BY c.key
  RETURN collect(c.id) AS kept
}
CALL (j) {
  OPTIONAL MATCH (j)-[:DROPPED]->(d:DroppedChange)
  OPTIONAL MATCH (s:Session {id: d.session})
  WITH d, s
  WHERE d IS NULL OR $all OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
  WITH d ORDER BY d.key, d.reason
  RETURN collect(d {.op, .key, .reason, .proposal, .session}) AS dropped
}
CALL (j) {
  OPTIONAL MATCH (j)-[:FROM_SESSION]->(s:Session)
  WHERE $all OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
  RETURN collect(s.id) AS sessions
}
RETURN j {.id, .status, .model, .error, .queuedAt, .startedAt, .finishedAt, .attempts,
          agent: j.agent, read: read, tried: tried, kept: kept, dropped: dropped,
          sessions: sessions} AS job
