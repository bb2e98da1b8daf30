// Retention: up to $batch items older than $cutoff (epoch ms) whose content is not yet erased
// become tombstones (no content, `erased`, and `expired`: retention emptied them, not an
// erasure, so the agent entries they support are not erase_agent_entries' to erase), each under
// its session's lock, as a command takes it; the session's revision grows, so no kept view of
// it is answered again. The entries they support and every provenance edge stay. Answers how
// many it erased (0: none is left), and their uids (`erasedUids`: keep_agent_sources leaves them
// out of the agent entries that cite them).
MATCH (i:Item)
WHERE i.at < $cutoff AND NOT coalesce(i.erased, false)
WITH i ORDER BY i.at LIMIT $batch
WITH i.session AS sid, collect(i) AS items
ORDER BY sid
MATCH (s:Session {id: sid})
SET s._lock = true
REMOVE s._lock
SET s.revision = s.revision + 1
WITH items
UNWIND items AS i
SET i.content = null, i.erased = true, i.expired = true
RETURN count(i) AS erased, collect(i.uid) AS erasedUids
