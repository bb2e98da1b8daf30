// One session's part of a learning job: the items it learned from (LEARNED, so no job reads
// them again), the changes it dropped, why, and whom each says it is about, and the turns now
// fully learned from. Its kept
// changes are applied by apply_agent_changes in the same transaction.
MATCH (j:LearningJob {id: $job})
MATCH (s:Session {id: $session})
MERGE (j)-[:FROM_SESSION]->(s)
SET j.model = $model
WITH j, s
CALL (j) {
  UNWIND $read AS uid
  MATCH (i:Item {uid: uid})
  MERGE (j)-[:LEARNED]->(i)
}
CALL (j, s) {
  UNWIND $dropped AS d
  CREATE (j)-[:DROPPED]->(:DroppedChange {op: d.op, key: d.key, reason: d.reason,
                                          proposal: d.proposal, about: d.about, session: s.id,
                                          at: $at})
}
CALL (s) {
  UNWIND $turns AS tid
  MATCH (t:Turn {id: tid})-[:IN_SESSION]->(s)
  WHERE NOT EXISTS {
    MATCH (i:Item)-[:IN_TURN]->(t) WHERE NOT EXISTS { (i)<-[:LEARNED]-(:LearningJob) } }
  SET t.learnPending = false
}
RETURN j.id AS id
