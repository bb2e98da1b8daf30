// What the runs and learning jobs that read or tried items just erased ($uids) said of them:
// a run's error and every change it dropped, a learning job's error and the changes it dropped
// from the items' session, may quote them, and become null (the dropped changes' key and
// reason $withheld). A reader of another session than the items' (a fork's run reads its
// source's items; a job or run reads an item its author wrote in another's session) is reached
// too. Run in the erasure's transaction, after it erased the items (a session's deletion, a
// person's erasure, retention); erase_session marks its own session's runs besides, and clears
// them also when run again with nothing left to erase.
UNWIND $uids AS uid
MATCH (i:Item {uid: uid})
CALL (i) {
  OPTIONAL MATCH (r:Run)-[:READ|TRIED]->(i)
  WITH DISTINCT r
  WHERE r IS NOT NULL
  SET r.error = null
  WITH r
  OPTIONAL MATCH (r)-[:DROPPED]->(d:DroppedChange)
  WHERE NOT coalesce(d.erased, false)
  SET d.erased = true, d.proposal = null, d.key = $withheld, d.reason = $withheld
}
CALL (i) {
  OPTIONAL MATCH (j:LearningJob)-[:LEARNED|TRIED]->(i)
  WITH DISTINCT i, j
  WHERE j IS NOT NULL
  SET j.error = null, j.errorSessions = null, j.errorParts = null
  WITH i, j
  OPTIONAL MATCH (j)-[:DROPPED]->(d:DroppedChange {session: i.session})
  WHERE NOT coalesce(d.erased, false)
  SET d.erased = true, d.proposal = null, d.key = $withheld, d.reason = $withheld,
      d.about = null
}
RETURN count(i) AS items
