// Learning jobs by id: status, model, error, the items read (with their sessions), and the
// changes kept and dropped, and why. Another member's private changes, and the items and the
// errors of sessions the reader may not reach, are left out (A9).
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
CALL (j) {
  // (the errors of the sessions the reader may reach; the service's view reads them all)
  UNWIND range(0, size(coalesce(j.errorSessions, [])) - 1) AS n
  WITH j, n, j.errorSessions[n] AS sid
  WHERE $all OR EXISTS { MATCH (:Session {id: sid})-[:WITH]->(:Person {id: $person}) }
  WITH j, n, sid ORDER BY n
  RETURN collect(sid + ': ' + j.errorParts[n]) AS failed
}
WITH j, read, tried, kept, dropped, sessions,
     CASE WHEN size(failed) = 0 THEN j.error
          ELSE reduce(text = head(failed), part IN tail(failed) | text + '; ' + part) END
     AS error
RETURN j {.id, .status, .model, .queuedAt, .startedAt, .finishedAt, .attempts, error: error,
          agent: j.agent, read: read, tried: tried, kept: kept, dropped: dropped,
          sessions: sessions} AS job
