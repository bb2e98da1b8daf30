// Items retention emptied before it marked them `expired` (a graph written before it did), a
// batch at a time: an erased item that no erasure went through (its session is not erased, its
// author is no erasure's opaque id). Without the mark, an erasure would count such an item as
// one it erased, and take the agent entries it supports. Each is locked itself (and its
// session first) and read again, as an erasure running meanwhile may have gone through it.
// How many it found (none: none is left) and how many it marked.
MATCH (old:Item)
WHERE old.erased AND old.expired IS NULL
  AND NOT coalesce(old.author, '') STARTS WITH 'erased-'
  AND NOT EXISTS { MATCH (s:Session {id: old.session}) WHERE coalesce(s.erased, false) }
WITH old LIMIT $batch
WITH old.session AS sid, collect(old.uid) AS uids
ORDER BY sid
OPTIONAL MATCH (locked:Session {id: sid})
FOREACH (x IN CASE WHEN locked IS NULL THEN [] ELSE [locked] END |
  SET x._lock = true
  REMOVE x._lock)
WITH collect(uids) AS batches
WITH reduce(all = [], uids IN batches | all + uids) AS found
CALL (found) {
  UNWIND found AS uid
  MATCH (i:Item {uid: uid})
  SET i._lock = true
  REMOVE i._lock
  WITH i
  WHERE i.expired IS NULL AND NOT coalesce(i.author, '') STARTS WITH 'erased-'
    AND NOT EXISTS { MATCH (s:Session {id: i.session}) WHERE coalesce(s.erased, false) }
  SET i.expired = true
  RETURN count(i) AS marked
}
RETURN size(found) AS found, marked
