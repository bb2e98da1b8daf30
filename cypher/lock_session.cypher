// Take the session's write lock before anything reads its head or revision: Neo4j reads
// committed data only, so a check made before the lock would let two writers both pass.
// The lock is taken by the write and held until the transaction ends; the property goes.
MATCH (s:Session {id: $id})-[:OF_AGENT]->(:Agent)-[:IN_ORG]->(:Org {id: $org})
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
SET s._lock = true
REMOVE s._lock
RETURN s.id AS id
