// Benchmark floor (bench/run), not used by the service: the least graph work a turn of one
// item needs, as one statement: lock the session, add the turn, its item and the version
// that adds it (the new head), and count the revision.
// (the plan starts from the index seek on s; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (s:Session {id: $id})-[:OF_AGENT]->(:Agent)-[:IN_ORG]->({id: $org})
USING INDEX s:Session(id)
SET s._lock = true
REMOVE s._lock
WITH s
MATCH (s)-[hr:HEAD]->(h:Version)
CREATE (t:Turn {id: $turn.id, at: $turn.at, model: null, shown: [], shownAgent: [],
                status: 'completed', completedAt: $turn.at, head: $turn.head,
                revision: s.revision + 1, learnPending: false})
CREATE (t)-[:IN_SESSION]->(s)
CREATE (v:Version {id: $turn.head, depth: h.depth + 1, items: h.items + 1, cause: 'turn',
                   at: $turn.at})
CREATE (v)-[:PARENT]->(h)
CREATE (v)-[:OF]->(s)
CREATE (i:Item {uid: $turn.item.uid, id: $turn.item.id, type: 'message', role: 'user',
                content: $turn.item.content, author: $person, at: $turn.at, seq: h.items + 1})
CREATE (v)-[:ADDS]->(i)
CREATE (i)-[:IN_TURN]->(t)
DELETE hr
CREATE (s)-[:HEAD]->(v)
SET s.revision = s.revision + 1
RETURN v.id AS head, s.revision AS revision
