// Take the session's write lock before anything reads its head or revision: Neo4j reads
// committed data only, so a check made before the lock would let two writers both pass.
// The lock is taken by the write and held until the transaction ends; the property goes.
// Then, in the same statement, the state a command checks and needs: with a $key, that key's
// entry as it stands (its CURRENT change); whether a client ever chose an item id here; and
// whether the head is shared (another version continues it: a fork made at the head).
// (`orgSettings`, not `org`: a memory command runs it together with session_views, which
// answers `org`.)
// (the plan starts from the index seek on s; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (s:Session {id: $id})-[:OF_AGENT]->(a:Agent)-[:IN_ORG]->(o {id: $org})
USING INDEX s:Session(id)
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
SET s._lock = true
REMOVE s._lock
WITH s, a, o
MATCH (s)-[:HEAD]->(h:Version)
OPTIONAL MATCH (s)-[:WITH]->(p:Person)
// (the index: one entry, not a look through every one)
OPTIONAL MATCH (s)-[:HAS_ENTRY]->(en:Entry {session: s.id, key: $key})-[:CURRENT]->(c:Change)
USING INDEX en:Entry(session, key)
RETURN c {.id, .key, .content, .kind, .status, .at} AS current,
       coalesce(s.clientItemIds, false) AS clientItemIds, s.revision AS revision, h.id AS head, h.depth AS depth, h.items AS items,
       s.kind AS kind, p.id AS person, a.shared AS agentShared, s.model AS model,
       a.model AS agentModel, a.id AS agent,
       s.useOverride AS useOverride, s.generateOverride AS generateOverride,
       o {.memoryUse, .memoryGenerate, .agentMemory, .helperModel, .model} AS orgSettings,
       EXISTS { (:Version)-[:PARENT]->(h) } AS headShared
