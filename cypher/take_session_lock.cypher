// Take the session's write lock where the caller may reach it, and read only the org's
// settings (which change without moving the session's revision): for a statement run after it
// that checks, under the lock, all else it needs itself (record_turn's guards, for a turn
// decided before the lock; record_memory_edit's head and revision, for an edit made at the
// view this process holds).
// (the plan starts from the index seek on s; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (s:Session {id: $id})-[:OF_AGENT]->(:Agent)-[:IN_ORG]->(o {id: $org})
USING INDEX s:Session(id)
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
SET s._lock = true
REMOVE s._lock
RETURN o {.memoryUse, .memoryGenerate, .agentMemory, .helperModel, .model} AS orgSettings
