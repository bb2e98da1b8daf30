// The last part of a person's erasure: the items they authored in other sessions of the org
// become tombstones; what learning jobs kept of the changes about them they dropped from other
// members' sessions goes (the proposal; key and reason become $withheld); their id where it is
// stored as a value (an item's `author`, an agent change's `person`) becomes the erasure's
// opaque id, as does the Person node's own id; their tokens are revoked; the erasure is done,
// and its record no longer holds the opaque id.
// Run again, it finds nothing left to do. Answers the uids of the items it erased
// (`erasedUids`: keep_agent_sources leaves them out of the agent entries that cite them).
MATCH (er:Erasure {id: $erasure})
MATCH (o:Org {id: $org})
CALL (o) {
  OPTIONAL MATCH (i:Item {author: $person})
  WHERE EXISTS { (:Session {id: i.session})-[:OF_AGENT|ERASED_FROM]->(:Agent)-[:IN_ORG]->(o) }
  SET i.author = $replacement, i.content = null,
      i.erased = true
  REMOVE i.expired
  RETURN count(i) AS items, collect(i.uid) AS erasedUids
}
CALL (o) {
  OPTIONAL MATCH (a:Agent)-[:IN_ORG]->(o)
  OPTIONAL MATCH (c:AgentChange {agent: a.id, person: $person})
  SET c.person = $replacement
}
CALL (o) {
  OPTIONAL MATCH (j:LearningJob)-[:FOR_AGENT]->(:Agent)-[:IN_ORG]->(o)
  OPTIONAL MATCH (j)-[:DROPPED]->(d:DroppedChange {about: $person})
  WHERE NOT coalesce(d.erased, false)
  SET d.erased = true, d.proposal = null, d.key = $withheld, d.reason = $withheld,
      d.about = null
  RETURN count(DISTINCT CASE WHEN d IS NULL THEN null ELSE j END) AS jobs
}
CALL () {
  OPTIONAL MATCH (p:Person {org: $org, id: $person})
  OPTIONAL MATCH (t:Token)-[:GRANTS]->(p)
  SET t.revokedAt = coalesce(t.revokedAt, $now)
  WITH DISTINCT p WHERE p IS NOT NULL
  SET p.id = $replacement, p.erased = true
  REMOVE p.erasing
}
SET er.items = er.items + items, er.jobs = er.jobs + jobs, er.status = 'done'
// (the record keeps whom it erased, not the opaque id that stands for them now)
REMOVE er.replacement
RETURN er {.id, .person, .at, .sessions, .items, .entries, .agentEntries, .changes,
           .jobs} AS erasure, erasedUids
