// Records a turn's items as one new version (the new head), and queues its run ($run). A turn that waited for an
// approval is the same Turn node, completed later with the items of its second step.
// A turn decided from what a session was at a revision ($turn.revision) and its agent's memory
// at a version ($turn.agentVersion) is recorded only if neither moved since: else this
// matches nothing and writes nothing (each check is skipped when its parameter is null).
// So is one decided where the org's settings were $turn.org (as org_settings reads them: the
// three switches, then whether each model is unset and its name) and the head was continued
// by another version or not ($turn.headShared).
MATCH (s:Session {id: $id})-[hr:HEAD]->(h:Version)
WHERE ($turn.revision IS NULL OR s.revision = $turn.revision)
  AND ($turn.agentVersion IS NULL
       OR EXISTS { (s)-[:OF_AGENT]->(a:Agent) WHERE coalesce(a.memoryVersion, 0) = $turn.agentVersion })
  AND ($turn.headShared IS NULL OR EXISTS { (:Version)-[:PARENT]->(h) } = $turn.headShared)
  AND ($turn.org IS NULL
       OR EXISTS { (s)-[:OF_AGENT]->(:Agent)-[:IN_ORG]->(o)
                   WHERE [coalesce(o.memoryUse <> false, true),
                          coalesce(o.memoryGenerate <> false, true),
                          coalesce(o.agentMemory <> false, true),
                          o.helperModel IS NULL, coalesce(o.helperModel, ''),
                          o.model IS NULL, coalesce(o.model, '')] = $turn.org })
MERGE (t:Turn {id: $turn.id})
  ON CREATE SET t.at = $turn.at, t.model = $turn.model, t.shown = $turn.shown,
                t.shownAgent = $turn.shownAgent
SET t.status = $turn.status,
    t.completedAt = CASE WHEN $turn.status = 'completed' THEN $turn.at ELSE null END,
    t.head = $turn.head, t.revision = s.revision + 1,
    t.learnPending = $turn.learn OR coalesce(t.learnPending, false)
MERGE (t)-[:IN_SESSION]->(s)
CREATE (v:Version {id: $turn.head, depth: h.depth + 1, items: h.items + size($turn.items),
                   cause: 'turn', at: $turn.at, revision: s.revision + 1})
CREATE (v)-[:PARENT]->(h)
CREATE (v)-[:OF]->(s)
DELETE hr
CREATE (s)-[:HEAD]->(v)
SET s.revision = s.revision + 1,
    s.clientItemIds = coalesce(s.clientItemIds, false) OR $turn.clientItemIds
WITH s, t, v, h
CALL (s, t, v, h) {
  UNWIND range(0, size($turn.items) - 1) AS n
  WITH s, t, v, h, n, $turn.items[n] AS it
  CREATE (i:Item {uid: it.uid, id: it.id, type: it.type, role: it.role, content: it.content,
                  app: it.app, author: it.author, at: $turn.at, seq: h.items + n + 1,
                  session: s.id})
  CREATE (v)-[:ADDS]->(i)
  CREATE (i)-[:IN_TURN]->(t)
}
// What it was shown: only a new turn is shown anything (a completing step adds nothing), so
// each edge is created, not merged (a merge would look through every turn that saw the change).
CALL (t) {
  UNWIND $turn.saw AS cid
  MATCH (c:Change {id: cid})
  CREATE (t)-[:SAW]->(c)
}
CALL (t) {
  UNWIND $turn.sawAgent AS cid
  MATCH (c:AgentChange {id: cid})
  CREATE (t)-[:SAW]->(c)
}
// The turn's consolidation run (S7), when it asks for one: queued by the same statement, as
// `queue_run` writes a run.
CALL (s, t) {
  UNWIND CASE WHEN $run IS NULL THEN [] ELSE [$run] END AS run
  CREATE (r:Run {id: run.id, status: 'queued', model: run.model, trigger: 'turn',
                 queuedAt: run.at, attempts: 0})
  CREATE (r)-[:FOR_SESSION]->(s)
  CREATE (r)-[:FOR_TURN]->(t)
}
// What the session is after the turn (the columns differ from take_session_lock's, which it
// runs with).
RETURN t.id AS recorded, s.revision AS revisionAfter, v.id AS headAfter, v.depth AS depthAfter,
       v.items AS itemsAfter
