// The sources an agent entry keeps (see agent_entries): the items its CURRENT change cites that
// are not erased, ordered by session, then timeline, as four lists of one length
// (`sourceSessions`, `sourceItems`, `sourceUids`, `sourcePersons`: each source's session, item
// id and uid, and its session's person, '' for none, for a list property holds no null).
// Derived for the entries whose CURRENT change is one of $current (the changes just written),
// or cites one of $cited (items just erased: an erased item is no entry's source). This is
// where that rule is kept. Each entry's lock is taken before its CURRENT change is read, so a
// write in flight (which writes the entry too) is never undone. An erased entry (a tombstone)
// keeps none (erase_agent_entries). How many.
CALL () {
  UNWIND $current AS cid
  MATCH (c:AgentChange {id: cid})
  RETURN c
  UNION
  UNWIND $cited AS uid
  MATCH (:Item {uid: uid})<-[:CITES]-(c:AgentChange)
  RETURN c
}
MATCH (e:AgentEntry)-[:CURRENT]->(c)
WHERE NOT coalesce(e.erased, false)
WITH DISTINCT e
SET e._lock = true
REMOVE e._lock
WITH e
MATCH (e)-[:CURRENT]->(c:AgentChange)
CALL (c) {
  OPTIONAL MATCH (c)-[r:CITES]->(i:Item)
    WHERE NOT coalesce(i.erased, false)
  OPTIONAL MATCH (:Session {id: r.session})-[:WITH]->(p:Person)
  WITH r, i, p ORDER BY r.session, i.seq
  WITH r, i, p WHERE i IS NOT NULL
  RETURN collect(r.session) AS sessions, collect(i.id) AS items, collect(i.uid) AS uids,
         collect(coalesce(p.id, '')) AS persons
}
SET e.sourceSessions = sessions, e.sourceItems = items, e.sourceUids = uids,
    e.sourcePersons = persons
RETURN count(e) AS keptSources
