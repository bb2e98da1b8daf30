// What a learning job reads: for each session of the agent with turns left to learn from, its
// person and the items of those turns that no job has learned from yet; and the org's helper
// model and members. A session's items come in timeline order (items of turns on two branches,
// after a revert, may share a position: the turn's time orders those), its turns in the order
// they were recorded.
MATCH (j:LearningJob {id: $job})-[:FOR_AGENT]->(a:Agent)-[:IN_ORG]->(o:Org)
CALL (a) {
  OPTIONAL MATCH (a)<-[:OF_AGENT]-(s:Session)<-[:IN_SESSION]-(t:Turn {learnPending: true})
  OPTIONAL MATCH (i:Item)-[:IN_TURN]->(t)
  WHERE NOT EXISTS { (i)<-[:LEARNED]-(:LearningJob) }
  OPTIONAL MATCH (s)-[:WITH]->(p:Person)
  WITH s, p, t, i ORDER BY s.createdAt, s.id, i.seq, t.at
  WITH s, p, collect(DISTINCT t) AS pending,
       collect(i {.uid, .id, .type, .role, .content, .app, .author, .at, .seq, turn: t.id,
                  erased: coalesce(i.erased, false),
                  expired: coalesce(i.expired, false)}) AS items
  WHERE s IS NOT NULL
  CALL (pending) {
    UNWIND pending AS t
    WITH t ORDER BY t.at, t.id
    RETURN collect(t.id) AS turns
  }
  RETURN collect({session: s.id, person: p.id, turns: turns, items: items}) AS sessions
}
CALL (o) {
  MATCH (m:Person)-[:MEMBER_OF]->(o)
  WHERE m.erased IS NULL
  RETURN collect(m.id) AS members
}
RETURN j {.id, .status, .model} AS job, a.id AS agent, o.id AS org,
       o.helperModel AS helperModel, o.agentMemory AS agentMemory, sessions, members
