// The newest change of one key on the session's branch: the entry as it stands.
MATCH (:Session {id: $id})-[:HEAD]->(h:Version)
MATCH (h)-[:PARENT*0..]->(v:Version)<-[:AT]-(c:Change)
WHERE c.key = $key
RETURN c {.id, .key, .content, .kind, .status, .at} AS change
ORDER BY v.depth DESC
LIMIT 1
