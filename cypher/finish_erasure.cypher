// The last part of a person's erasure: the items they authored in other sessions of the org
// become tombstones; what learning jobs kept of the changes about them they dropped from other
// members' sessions goes (the proposal; key and reason become $withheld); their id where it is
// stored as a value (an item's `author`, an agent change's `person`, an erased agent entry's
// owner or subject) becomes the erasure's
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
  // (an agent entry erased before, by a deletion of one of their sessions, left the memory
  // holding them as its owner or subject: the tombstone, its changes and the name the turns
  // shown it list it by take the opaque id as well)
  OPTIONAL MATCH (a:Agent)-[:IN_ORG]->(o)
  OPTIONAL MATCH (e:AgentEntry {agent: a.id})
  WHERE coalesce(e.erased, false) AND (e.owner = $person OR e.about = $person)
  WITH DISTINCT e
  WHERE e IS NOT NULL
  CALL (e) {
    MATCH (t:Turn)-[:SAW]->(:AgentChange)-[:OF_ENTRY]->(e)
    WITH DISTINCT t
    SET t.shownAgent = [k IN t.shownAgent |
                        CASE WHEN k = e.key + '@' + $person THEN e.key + '@' + $replacement
                             ELSE k END]
  }
  CALL (e) {
    MATCH (c:AgentChange)-[:OF_ENTRY]->(e)
    SET c.about = CASE WHEN c.about = $person THEN $replacement ELSE c.about END,
        c.owner = CASE WHEN c.owner = $person THEN $replacement ELSE c.owner END
  }
  SET e.owner = CASE WHEN e.owner = $person THEN $replacement ELSE e.owner END,
      e.about = CASE WHEN e.about = $person THEN $replacement ELSE e.about END
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
