// Items retention emptied before it marked them `expired` (a graph written before it did), a
// batch at a time: an erased item that no erasure went through (its session is not erased, its
// author is no erasure's opaque id). Without the mark, an erasure would count such an item as
// one it erased, and take the agent entries it supports. Each is read again under its
// session's lock, as an erasure running meanwhile may have gone through it. How many.
MATCH (old:Item)
WHERE old.erased AND old.expired IS NULL
  AND NOT coalesce(old.author, '') STARTS WITH 'erased-'
  AND NOT EXISTS { MATCH (s:Session {id: old.session}) WHERE coalesce(s.erased, false) }
WITH old LIMIT $batch
WITH old.session AS sid, collect(old.uid) AS uids
ORDER BY sid
MATCH (locked:Session {id: sid})
SET locked._lock = true
REMOVE locked._lock
WITH sid, uids
MATCH (s:Session {id: sid})
WHERE NOT coalesce(s.erased, false)
UNWIND uids AS uid
MATCH (i:Item {uid: uid})
WHERE i.expired IS NULL AND NOT coalesce(i.author, '') STARTS WITH 'erased-'
SET i.expired = true
RETURN count(i) AS marked
