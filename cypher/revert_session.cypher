// Going back: a new head whose parent is the old version, so history and memory are what
// they were there. Nothing is destroyed: the abandoned branch stays, linked by REVERTED_FROM.
// The kept state then becomes the old version's (keep_state, in the same transaction).
MATCH (s:Session {id: $id})-[hr:HEAD]->(h:Version)
MATCH (t:Version {id: $revert.to})
CREATE (v:Version {id: $revert.head, depth: t.depth + 1, items: t.items, cause: 'revert',
                   at: $revert.at, revision: s.revision + 1})
CREATE (v)-[:PARENT]->(t)
CREATE (v)-[:OF]->(s)
CREATE (v)-[:REVERTED_FROM]->(h)
DELETE hr
CREATE (s)-[:HEAD]->(v)
SET s.revision = s.revision + 1
RETURN v.id AS head
