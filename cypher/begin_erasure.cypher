// The erasure of a person of an org: the one still running for them (a crashed erasure is
// resumed, with the opaque id it chose), or a new one. It records who asked and when, and
// counts what it erased; it holds no personal content. Answers no row when the org has no
// such person and no erasure of them is running.
MATCH (o:Org {id: $org})
OPTIONAL MATCH (running:Erasure {org: $org, person: $person, status: 'running'})
OPTIONAL MATCH (p:Person {org: $org, id: $person})
WITH o, running, p
WHERE running IS NOT NULL OR p IS NOT NULL
// the person's lock, as create_session takes it: no session of theirs starts unseen
FOREACH (locked IN CASE WHEN p IS NULL THEN [] ELSE [p] END |
  SET locked._lock = true
  REMOVE locked._lock)
WITH o, running
CALL (o, running) {
  WITH o WHERE running IS NULL
  CREATE (e:Erasure {id: $erasure.id, org: $org, person: $person, status: 'running',
                     replacement: $erasure.replacement, at: $erasure.at, by: $erasure.by,
                     sessions: 0, items: 0, entries: 0, agentEntries: 0, changes: 0, jobs: 0})
  CREATE (e)-[:IN_ORG]->(o)
  RETURN e
  UNION
  WITH running WHERE running IS NOT NULL
  RETURN running AS e
}
RETURN e {.id, .person, .replacement, .at, .by, .status, .sessions, .items, .entries,
          .agentEntries, .changes, .jobs} AS erasure
