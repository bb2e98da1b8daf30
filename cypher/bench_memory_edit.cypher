// Benchmark floor (bench/run), not used by the service: the least graph work a Remember or
// Forget needs, as one statement: lock the session, check its head and revision, add the
// memory-edit item and the version that adds it (the new head), the change, and the entry's
// kept current state (a CURRENT edge and its fields), so that no read has to walk history.
// (the plan starts from the index seek on s; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (s:Session {id: $id})-[:OF_AGENT]->(:Agent)-[:IN_ORG]->({id: $org})
USING INDEX s:Session(id)
SET s._lock = true
REMOVE s._lock
WITH s
MATCH (s)-[hr:HEAD]->(h:Version)
WHERE h.id = $expected AND s.revision = $revision
MATCH (p:Person {org: $org, id: $person})
CREATE (i:Item {uid: $edit.itemUid, id: $edit.itemId, type: 'memory_edit', role: 'person',
                author: $person, content: $edit.itemContent, at: $edit.at, seq: h.items + 1})
CREATE (i)-[:BY]->(p)
CREATE (v:Version {id: $edit.head, depth: h.depth + 1, items: h.items + 1, cause: $edit.op,
                   at: $edit.at})
CREATE (v)-[:PARENT]->(h)
CREATE (v)-[:ADDS]->(i)
CREATE (v)-[:OF]->(s)
MERGE (e:Entry {session: s.id, key: $edit.key})
  ON CREATE SET e.createdAt = $edit.at
MERGE (s)-[:HAS_ENTRY]->(e)
WITH s, hr, v, i, p, e
OPTIONAL MATCH (e)-[current:CURRENT]->(prev:Change)
CREATE (c:Change {id: $edit.change, op: $edit.op, maker: 'person', key: $edit.key,
                  content: coalesce($edit.content, prev.content),
                  kind: coalesce($edit.kind, prev.kind), status: $edit.status, at: $edit.at,
                  beforeContent: prev.content, beforeKind: prev.kind, beforeStatus: prev.status,
                  revision: s.revision + 1, head: $edit.head})
CREATE (c)-[:AT]->(v)
CREATE (c)-[:CITES]->(i)
CREATE (c)-[:MADE_BY]->(p)
CREATE (c)-[:IN_SESSION]->(s)
CREATE (c)-[:OF_ENTRY]->(e)
FOREACH (x IN CASE WHEN prev IS NULL THEN [] ELSE [prev] END | CREATE (c)-[:REPLACES]->(x))
DELETE current
CREATE (e)-[:CURRENT]->(c)
SET e.content = c.content, e.kind = c.kind, e.status = c.status, e.updatedAt = c.at,
    e.change = c.id, e.sources = [i.id], e.sourceUids = [i.uid]
DELETE hr
CREATE (s)-[:HEAD]->(v)
SET s.revision = s.revision + 1
RETURN v.id AS head, s.revision AS revision
