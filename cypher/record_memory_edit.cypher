// S13, S14, S17: a person's Remember or Forget. It adds a memory-edit item, makes a new
// version (the new head) that adds it, and records the change citing that item. It is made by
// the person, or by the org's service when a service token sent it. The entry's CURRENT change
// moves to the new one, and the entry keeps its state (kept state: see session_views).
//
// Run after lock_session (the session's lock is held). It writes nothing, and answers no row,
// unless the head and revision are still $expected and $revision (S12), a Forget's key has an
// entry (S14: a Forget takes that entry's content and kind), and the item's id is known: given
// as $edit.itemId, or the next `i-NN` of the branch ($edit.itemPrefix, zero-padded to
// $edit.itemDigits: ids.item_id) when no client ever chose an item id here. The caller then
// finds out which from lock_session's state.
MATCH (s:Session {id: $id})-[hr:HEAD]->(h:Version)
WHERE h.id = $expected AND s.revision = $revision
  AND ($edit.itemId IS NOT NULL OR NOT coalesce(s.clientItemIds, false))
CALL () {
  MATCH (p:Person {org: $org, id: $edit.person})
  RETURN p
  UNION
  MATCH (p:Service {org: $org, id: $edit.service})
  RETURN p
}
// (the index: one entry, not a look through every one)
OPTIONAL MATCH (s)-[:HAS_ENTRY]->(en:Entry {session: s.id, key: $edit.key})
                -[:CURRENT]->(prev:Change)
USING INDEX en:Entry(session, key)
WITH s, hr, h, p, prev, toString(h.items + 1) AS seq
WHERE $edit.op = 'remember' OR prev IS NOT NULL
WITH s, hr, h, p, prev,
     coalesce($edit.itemId, $edit.itemPrefix + right('0000000000' + seq,
              CASE WHEN size(seq) > $edit.itemDigits THEN size(seq) ELSE $edit.itemDigits END))
       AS itemId,
     // $edit.at was taken before the lock; a write that held it may have committed a later one
     CASE WHEN $edit.at < h.at THEN h.at ELSE $edit.at END AS at
CREATE (i:Item {uid: $edit.itemUid, id: itemId, type: 'memory_edit', role: 'person',
                author: coalesce($edit.person, $edit.service), content: $edit.itemContent, at: at,
                seq: h.items + 1, session: s.id})
CREATE (i)-[:BY]->(p)
CREATE (v:Version {id: $edit.head, depth: h.depth + 1, items: h.items + 1, cause: $edit.op,
                   at: at, revision: s.revision + 1})
CREATE (v)-[:PARENT]->(h)
CREATE (v)-[:ADDS]->(i)
CREATE (v)-[:OF]->(s)
CREATE (c:Change {id: $edit.change, op: $edit.op, maker: 'person', key: $edit.key,
                  content: coalesce($edit.content, prev.content),
                  kind: coalesce($edit.kind, prev.kind), status: $edit.status, at: at,
                  beforeContent: prev.content, beforeKind: prev.kind, beforeStatus: prev.status,
                  revision: s.revision + 1, head: $edit.head})
CREATE (c)-[:AT]->(v)
CREATE (c)-[:CITES]->(i)
CREATE (c)-[:MADE_BY]->(p)
CREATE (c)-[:IN_SESSION]->(s)
MERGE (e:Entry {session: s.id, key: $edit.key})
  ON CREATE SET e.createdAt = at
MERGE (s)-[:HAS_ENTRY]->(e)
CREATE (c)-[:OF_ENTRY]->(e)
// (the entry's kept state: what a view reads of it, written with the change)
SET e.content = c.content, e.kind = c.kind, e.status = c.status, e.updatedAt = c.at,
    e.change = c.id, e.sources = [i.id], e.sourceUids = [i.uid]
WITH s, hr, v, c, e, prev, i
OPTIONAL MATCH (e)-[now:CURRENT]->(:Change)
DELETE now
CREATE (e)-[:CURRENT]->(c)
FOREACH (x IN CASE WHEN prev IS NULL THEN [] ELSE [prev] END | CREATE (c)-[:REPLACES]->(x))
DELETE hr
CREATE (s)-[:HEAD]->(v)
SET s.revision = s.revision + 1
// It answers what it wrote: the new head (`recorded`; not `head`: lock_session, run together
// with it, answers the head it checked), and in `edited` the revision after it, the entry's new
// state (as `Entry.from_row` reads it) and the edit's item, every property (as `item` reads
// it): with lock_session's state, all that a view of the session at $revision needs to become
// the view after it (see `SessionView.edited`).
RETURN v.id AS recorded,
       {revision: s.revision,
        entry: [c.key, c.content, c.kind, c.status, c.at, c.id, [i.id]],
        item: i {.uid, .id, .type, .role, .content, .app, .author, .at, .seq}} AS edited
