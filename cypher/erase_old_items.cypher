// Retention: up to $batch items older than $cutoff (epoch ms) whose content is not yet erased
// become tombstones (no content, `erased`, and `expired`: retention emptied them, not an
// erasure, so the agent entries they support are not erase_agent_entries' to erase), each under
// its session's lock, as a command takes it; the session's revision grows, so no kept view of
// it is answered again. The entries they support and every provenance edge stay. Answers how
// many it erased (0: none is left), and their uids (`erasedUids`: keep_agent_sources leaves them
// out of the agent entries that cite them).
// Each item is read again under the lock: an erasure that held it may have erased it
// meanwhile, and such an item is the erasure's, never `expired`.
MATCH (old:Item)
WHERE old.at < $cutoff AND NOT coalesce(old.erased, false)
WITH old ORDER BY old.at LIMIT $batch
WITH old.session AS sid, collect(old.uid) AS uids
ORDER BY sid
MATCH (s:Session {id: sid})
SET s._lock = true
REMOVE s._lock
SET s.revision = s.revision + 1
WITH uids
UNWIND uids AS uid
MATCH (i:Item {uid: uid})
WHERE NOT coalesce(i.erased, false)
SET i.content = null, i.erased = true, i.expired = true
RETURN count(i) AS erased, collect(i.uid) AS erasedUids
