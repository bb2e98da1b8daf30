// The erasure of a person of an org: the one still running for them (a crashed erasure is
// resumed, with the opaque id it chose), or a new one. It records who asked and when, and
// counts what it erased; it holds no personal content. Answers no row when the org has no
// such person and no erasure of them is running.
MATCH (o:Org {id: $org})
// (what an erasure left of a person, named by its opaque id, is no person to erase)
OPTIONAL MATCH (p:Person {org: $org, id: $person}) WHERE p.erased IS NULL
// The person's lock, taken by marking them `erasing` before anything is read: a session that
// create_session or fork_session starts for them is either in the erasure's scope, or
// refused; and of two erasures asked at once, the second finds the first running.
FOREACH (locked IN CASE WHEN p IS NULL THEN [] ELSE [p] END |
  SET locked.erasing = true)
WITH o, p
OPTIONAL MATCH (running:Erasure {org: $org, person: $person, status: 'running'})
WITH o, running, p
WHERE running IS NOT NULL OR p IS NOT NULL
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
