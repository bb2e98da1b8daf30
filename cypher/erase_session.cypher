// Erases one session's content under its lock (as a command takes it): every item of its
// timeline becomes a tombstone (no content, `erased`), with the person's id as its author
// replaced by the erasure's opaque id; every change of its memory loses its content before and
// after; its entries leave the kept state (no CURRENT change, no state kept on the entry), so
// no view, search or instruction shows them, and so do a fork's entries whose CURRENT change
// is one of its changes. A key is what the person said too: each entry takes an opaque key
// (`erased-` and a random UUID) of its own, which its changes and the turns shown it
// (`shown`) take in its place, so change chains and each key's history stay whole. What its
// runs and learning jobs kept of it goes: errors, and dropped changes' proposals, keys and
// reasons (a reason may quote what the model sent; key and reason become $withheld). Versions,
// change chains and provenance edges stay. The revision grows, and so does that of every fork
// whose view it changes, so no kept view of either is answered again (nor a watcher left with
// one), and the session leaves its agent
// (ERASED_FROM stands for OF_AGENT): every read and command finds no such session. Run again,
// it erases only what is left and counts only that, into the erasure ($erasure). Answers the
// uids of the items it erased (`erasedUids`: keep_agent_sources leaves them out of the agent
// entries that cite them).
MATCH (s:Session {id: $id})-[:OF_AGENT|ERASED_FROM]->(a:Agent)-[:IN_ORG]->(:Org {id: $org})
WHERE $reach IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $reach}) }
// The sessions whose view this changes are locked in id order (as erase_agent_entries takes an
// agent's sessions, so the two never wait on each other in a circle), and their revisions grow:
// this one; each fork whose entries cite one of its items not erased yet (the fork's view shows
// them erased now); each fork reverted to where it was forked, which holds its changes as the
// CURRENT ones of its entries (below, they leave its kept state).
CALL (s) {
  CALL (s) {
    RETURN s AS touched
    UNION
    MATCH (s)<-[:OF]-(:Version)-[:ADDS]->(i:Item)<-[:CITES]-(:Change)<-[:CURRENT]-(:Entry)
          <-[:HAS_ENTRY]-(touched:Session)
    WHERE NOT coalesce(i.erased, false) OR coalesce(i.expired, false)
    RETURN touched
    UNION
    MATCH (touched:Session)-[:HAS_ENTRY]->(:Entry)-[:CURRENT]->(:Change)-[:IN_SESSION]->(s)
    RETURN touched
  }
  WITH touched ORDER BY touched.id
  SET touched._lock = true
  REMOVE touched._lock
  SET touched.revision = touched.revision + 1
  RETURN count(touched) AS touched
}
WITH s, a
CALL (s, a) {
  OPTIONAL MATCH (s)-[of:OF_AGENT]->(a)
  DELETE of
  MERGE (s)-[:ERASED_FROM]->(a)
}
WITH s
CALL (s) {
  // (an item retention emptied (`expired`) is erased too: it still names its author)
  OPTIONAL MATCH (s)<-[:OF]-(:Version)-[:ADDS]->(i:Item)
  WHERE NOT coalesce(i.erased, false) OR coalesce(i.expired, false)
  SET i.erased = true, i.content = null,
      i.author = CASE WHEN i.author = $person THEN $replacement ELSE i.author END
  REMOVE i.expired
  RETURN count(i) AS items, collect(i.uid) AS erasedUids
}
CALL (s) {
  OPTIONAL MATCH (c:Change)-[:IN_SESSION]->(s)
  WHERE NOT coalesce(c.erased, false)
  SET c.erased = true, c.content = null, c.beforeContent = null
  RETURN count(c) AS changes
}
CALL (s) {
  // (a fork reverted to the version it was forked at holds its source's changes as the
  // CURRENT ones of its entries: those entries leave the kept state as the session's own do,
  // as the history now derives no entry for their keys)
  MATCH (c:Change)-[:IN_SESSION]->(s)
  MATCH (other:Session)-[:HAS_ENTRY]->(e:Entry)-[now:CURRENT]->(c)
  WHERE other <> s
  DELETE now
  REMOVE e.content, e.kind, e.status, e.updatedAt, e.change, e.sources, e.sourceUids
}
CALL (s) {
  OPTIONAL MATCH (s)-[:HAS_ENTRY]->(e:Entry)
  OPTIONAL MATCH (e)-[now:CURRENT]->(:Change)
  DELETE now
  REMOVE e.content, e.kind, e.status, e.updatedAt, e.change, e.sources, e.sourceUids
  WITH e WHERE e IS NOT NULL AND NOT coalesce(e.erased, false)
  // (a key is what the person said: the entry, each change of it and each turn's list of the
  // keys it was shown take one opaque key of the entry's own)
  WITH e, e.key AS said, 'erased-' + randomUUID() AS opaque
  SET e.erased = true, e.key = opaque
  WITH e, said, opaque
  CALL (e, said, opaque) {
    MATCH (c:Change)-[:OF_ENTRY]->(e)
    SET c.key = opaque
    WITH c
    MATCH (t:Turn)-[:SAW]->(c)
    SET t.shown = [k IN t.shown | CASE WHEN k = said THEN opaque ELSE k END]
  }
  RETURN count(e) AS entries
}
CALL (s) {
  OPTIONAL MATCH (r:Run)-[:FOR_SESSION]->(s)
  WHERE NOT coalesce(r.erased, false)
  SET r.erased = true, r.error = null
  WITH r
  OPTIONAL MATCH (r)-[:DROPPED]->(d:DroppedChange)
  SET d.erased = true, d.proposal = null, d.key = $withheld, d.reason = $withheld
  RETURN count(DISTINCT r) AS runs
}
CALL (s) {
  OPTIONAL MATCH (j:LearningJob)-[:DROPPED]->(d:DroppedChange {session: s.id})
  WHERE NOT coalesce(d.erased, false)
  SET d.erased = true, d.proposal = null, d.key = $withheld, d.reason = $withheld,
      d.about = null, j.error = null, j.errorSessions = null, j.errorParts = null
  RETURN count(DISTINCT j) AS jobs
}
CALL (s) {
  // (a learning job's error may quote what its model read of the session)
  OPTIONAL MATCH (j:LearningJob)-[:FROM_SESSION|TRIED]->(x)
  WHERE (x = s OR x.session = s.id) AND (j.error IS NOT NULL OR j.errorParts IS NOT NULL)
  SET j.error = null, j.errorSessions = null, j.errorParts = null
}
WITH s, items, erasedUids, changes, entries, runs, jobs,
     CASE WHEN coalesce(s.erased, false) THEN 0 ELSE 1 END AS sessions
SET s.erased = true
WITH s, items, erasedUids, changes, entries, runs, jobs, sessions
// (no Erasure when one session is deleted: SET on the missing record does nothing)
OPTIONAL MATCH (er:Erasure {id: $erasure})
SET er.sessions = er.sessions + sessions, er.items = er.items + items,
    er.changes = er.changes + changes, er.entries = er.entries + entries,
    er.jobs = er.jobs + runs + jobs
RETURN s.id AS erased, erasedUids
