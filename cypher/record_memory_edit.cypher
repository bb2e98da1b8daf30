// S13, S14, S17: a person's Remember or Forget. It adds a memory-edit item, makes a new
// version (the new head) that adds it, and records the change citing that item. It is made by
// the person, or by the org's service when a service token sent it. The entry's CURRENT change
// moves to the new one (kept state, issue 12).
MATCH (s:Session {id: $id})-[hr:HEAD]->(h:Version)
CALL () {
  MATCH (p:Person {org: $org, id: $edit.person})
  RETURN p
  UNION
  MATCH (p:Service {org: $org, id: $edit.service})
  RETURN p
}
OPTIONAL MATCH (prev:Change {id: $edit.replaces})
CREATE (i:Item {uid: $edit.itemUid, id: $edit.itemId, type: 'memory_edit', role: 'person',
                author: coalesce($edit.person, $edit.service), content: $edit.itemContent, at: $edit.at,
                seq: h.items + 1, session: s.id})
CREATE (i)-[:BY]->(p)
CREATE (v:Version {id: $edit.head, depth: h.depth + 1, items: h.items + 1, cause: $edit.op,
                   at: $edit.at, revision: s.revision + 1})
CREATE (v)-[:PARENT]->(h)
CREATE (v)-[:ADDS]->(i)
CREATE (v)-[:OF]->(s)
CREATE (c:Change {id: $edit.change, op: $edit.op, maker: 'person', key: $edit.key,
                  content: $edit.content, kind: $edit.kind, status: $edit.status, at: $edit.at,
                  beforeContent: prev.content, beforeKind: prev.kind, beforeStatus: prev.status,
                  revision: s.revision + 1, head: $edit.head})
CREATE (c)-[:AT]->(v)
CREATE (c)-[:CITES]->(i)
CREATE (c)-[:MADE_BY]->(p)
CREATE (c)-[:IN_SESSION]->(s)
MERGE (e:Entry {session: s.id, key: $edit.key})
  ON CREATE SET e.createdAt = $edit.at
MERGE (s)-[:HAS_ENTRY]->(e)
CREATE (c)-[:OF_ENTRY]->(e)
WITH s, hr, v, c, e, prev
OPTIONAL MATCH (e)-[now:CURRENT]->(:Change)
DELETE now
CREATE (e)-[:CURRENT]->(c)
FOREACH (x IN CASE WHEN prev IS NULL THEN [] ELSE [prev] END | CREATE (c)-[:REPLACES]->(x))
DELETE hr
CREATE (s)-[:HEAD]->(v)
SET s.revision = s.revision + 1
RETURN v.id AS head
