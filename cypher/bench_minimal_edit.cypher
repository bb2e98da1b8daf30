// Benchmark floor (bench/run), not used by the service: the minimal transaction with the
// meaning of a Remember or Forget on the project's labels, and nothing else: lock the session,
// check its head and revision, create the edit item, the version that adds it as the new head,
// the change citing the item, and the entry's new state (on the entry itself). No org, person
// or agent is matched, no earlier change is read or linked.
MATCH (s:Session {id: $id})
SET s._lock = true
REMOVE s._lock
WITH s
MATCH (s)-[hr:HEAD]->(h:Version)
WHERE h.id = $expected AND s.revision = $revision
CREATE (i:Item {uid: $edit.itemUid, id: $edit.itemId, type: 'memory_edit', role: 'person',
                author: $person, content: $edit.itemContent, at: $edit.at, seq: h.items + 1})
CREATE (v:Version {id: $edit.head, depth: h.depth + 1, items: h.items + 1, cause: $edit.op,
                   at: $edit.at})
CREATE (v)-[:PARENT]->(h)
CREATE (v)-[:ADDS]->(i)
CREATE (c:Change {id: $edit.change, op: $edit.op, key: $edit.key, content: $edit.content,
                  kind: $edit.kind, status: $edit.status, at: $edit.at})
CREATE (c)-[:AT]->(v)
CREATE (c)-[:CITES]->(i)
MERGE (e:Entry {session: s.id, key: $edit.key})
SET e.content = coalesce($edit.content, e.content), e.kind = coalesce($edit.kind, e.kind),
    e.status = $edit.status, e.updatedAt = $edit.at, e.change = c.id, e.sources = [i.id],
    e.sourceUids = [i.uid]
DELETE hr
CREATE (s)-[:HEAD]->(v)
SET s.revision = s.revision + 1
RETURN v.id AS head, s.revision AS revision
