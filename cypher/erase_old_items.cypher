// Retention: up to $batch items older than $cutoff (epoch ms) whose content is not yet erased
// become tombstones (no content, `erased`, and `expired`: retention emptied them, not an
// erasure, so the agent entries they support are not erase_agent_entries' to erase), each under
// its session's lock, as a command takes it; the session's revision grows, and so does that
// of each fork whose entries cite them (locked with them, in id order), so no kept view of
// either is answered again. The entries they support and every provenance edge stay. Each item
// is locked itself and read again: an erasure may have erased it meanwhile (under its session's
// lock, or, for an item the person wrote in another's session, under the item's own), and such
// an item is the erasure's, never `expired`. Answers how many it found (fewer than $batch: none
// is left), how many it erased, and their uids (`erasedUids`: keep_agent_sources leaves them
// out of the agent entries that cite them). An item an import is still writing (`Importing`)
// waits for its end: the edges that name what read it, and what cites it, may not be written
// yet, and emptying it takes what they name with it.
MATCH (old:Item)
WHERE old.at < $cutoff AND NOT coalesce(old.erased, false) AND NOT old:Importing
WITH old ORDER BY old.at LIMIT $batch
WITH collect(old.uid) AS found
// (each item's session, and each fork whose entries cite one of them, in id order)
CALL (found) {
  UNWIND found AS uid
  MATCH (i:Item {uid: uid})
  RETURN i.session AS sid
  UNION
  UNWIND found AS uid
  MATCH (:Item {uid: uid})<-[:CITES]-(:Change)<-[:CURRENT]-(:Entry)<-[:HAS_ENTRY]-(fork:Session)
  RETURN fork.id AS sid
}
WITH found, sid ORDER BY sid
OPTIONAL MATCH (s:Session {id: sid})
FOREACH (locked IN CASE WHEN s IS NULL THEN [] ELSE [s] END |
  SET locked._lock = true
  REMOVE locked._lock
  SET locked.revision = locked.revision + 1)
WITH found, count(*) AS sessions
CALL (found) {
  UNWIND found AS uid
  MATCH (i:Item {uid: uid})
  SET i._lock = true
  REMOVE i._lock
  WITH i
  WHERE NOT coalesce(i.erased, false)
  SET i.content = null, i.erased = true, i.expired = true
  RETURN count(i) AS erased, collect(i.uid) AS erasedUids
}
RETURN size(found) AS found, erased, erasedUids
