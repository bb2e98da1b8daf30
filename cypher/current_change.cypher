// The entry of one key as it stands at the session's head: its CURRENT change (kept state).
MATCH (:Session {id: $id})-[:HAS_ENTRY]->(:Entry {key: $key})-[:CURRENT]->(c:Change)
RETURN c {.id, .key, .content, .kind, .status, .at} AS change
