// Session views at their heads, from the kept state: each Entry of the session keeps the state
// of its CURRENT change (the newest change of its key on the head's branch): `content`, `kind`,
// `status`, `updatedAt`, `change`, and its sources' item ids and uids in timeline order
// (`sources`, `sourceUids`), written by the statement that writes the change; and the
// session keeps its processed ledger (`processed`, item ids in timeline order). No history is
// walked; `memory_at` derives the same for any other version. Each entry names its sources'
// item ids (in timeline order); with `$items` it also has the items themselves (each naming its
// turn; null without `$items`: a JSON view names only the ids, and reading each item is most
// of a large view's cost); `$itemFields` names the item's properties to read (a GraphQL
// selection reads only those it asks, and Neo4j reads fewer properties). With `$turns` (and
// `$items`) the view also brings those turns (each
// once, and only where the caller may reach its session, for a fork's sources may cite its
// parent's turns), so that a nested view (session -> entries -> sources -> turn) is this one
// statement. The caller's reach is checked once per session the turns are of, not once per turn.
//
// Entries, items and turns are lists, not maps, in the order `Entry.from_row`, `Item.from_row`
// and `TURN_ROW` read them (app/domain/sessions.py, items.py, turns.py): a large view is a row
// of many of them, and without a key per value it is smaller, and cheaper for Neo4j to send and
// for the driver to read.
//
// Reads are read-committed, even within one statement: a write committing while the view is
// read could show a revision that does not name the entries read with it (a client would then
// edit a state it never saw). So the revision is read first, the session is read again last
// (`revisionAfter`), and the repository reads again any view whose two differ: every change
// grows the revision.
UNWIND $ids AS sid
// (the plan starts from the index seek on s; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (s:Session {id: sid})-[:OF_AGENT]->(a:Agent)-[:IN_ORG]->(o {id: $org})
USING INDEX s:Session(id)
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
// (the agent's count of erasures is read first too: an erasure committing later makes the
// count kept with this view stale, never the view's turns)
WITH sid, s, a, o, s.revision AS revision, coalesce(a.entryErasures, 0) AS agentErasures
MATCH (s)-[:HEAD]->(h:Version)
OPTIONAL MATCH (s)-[:WITH]->(p:Person)
OPTIONAL MATCH (s)-[:STARTED_FROM]->(parent:Session)
OPTIONAL MATCH (s)-[f:FORKED_FROM]->(source:Session)
CALL (s) {
  // (one pass over the session's entries, each read from the state it keeps: no change, no
  // CITES walked, no sort; an entry without a kept change is in no view)
  OPTIONAL MATCH (s)-[:HAS_ENTRY]->(e:Entry)
  WHERE e.change IS NOT NULL
  CALL (e) {
    // (the guard first: without `$items` no item is read; an aggregate answers its one row.
    // With it, the items are reached from the CURRENT change over CITES, which costs Neo4j less
    // CPU than a seek of each kept uid in the index)
    WITH e WHERE $items AND e IS NOT NULL
    MATCH (e)-[:CURRENT]->(:Change)-[:CITES]->(i:Item)
    OPTIONAL MATCH (i)-[:IN_TURN]->(t:Turn)
    WITH i, t ORDER BY i.seq
    RETURN collect([f IN $itemFields | i[f]] + [t.id]) AS items, collect(t) AS cited
  }
  WITH e, items, cited WHERE e IS NOT NULL
  RETURN collect([e.key, e.content, e.kind, e.status, e.updatedAt, e.change, e.sources,
                  CASE WHEN $items THEN items END]) AS entries,
         collect(cited) AS citedTurns
}
CALL (citedTurns) {
  // (the guard first: a view without `$turns` skips the whole block, where a guard after the
  // UNWINDs would still run it; an aggregate answers its one row anyway)
  WITH citedTurns WHERE $turns
  UNWIND citedTurns AS cited
  UNWIND cited AS t
  WITH DISTINCT t
  MATCH (t)-[:IN_SESSION]->(ts:Session)
  WITH ts, collect(t) AS ofSession
  // (the org unlabelled: the plan goes from ts to it, never from the org over its agents)
  MATCH (ts)-[:OF_AGENT]->(:Agent)-[:IN_ORG]->({id: $org})
  WHERE $person IS NULL OR EXISTS { (ts)-[:WITH]->(:Person {id: $person}) }
  UNWIND ofSession AS t
  RETURN collect([t.id, t.status, t.model, t.shown, t.shownAgent, t.at, t.completedAt, t.head,
                  t.revision, ts.id]) AS turns
}
CALL (sid) {
  MATCH (again:Session {id: sid})
  RETURN again.revision AS revisionAfter
}
RETURN s {.id, .kind, revision: revision, .model, .useOverride, .generateOverride, .createdAt,
          agent: a.id, head: h.id, person: p.id, parent: parent.id,
          forkedFrom: source.id, forkedAt: f.at} AS session,
       o {.memoryUse, .memoryGenerate, .agentMemory, .helperModel, .model} AS org,
       entries, coalesce(s.processed, []) AS processed,
       coalesce(s.processedSeq, 0) AS processedSeq, revisionAfter, turns, agentErasures
