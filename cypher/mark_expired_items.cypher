// Items retention emptied before it marked them `expired` (a graph written before it did), a
// batch at a time: an erased item that no erasure went through (its session is not erased, its
// author is no erasure's opaque id). Without the mark, an erasure would count such an item as
// one it erased, and take the agent entries it supports. How many.
MATCH (i:Item)
WHERE i.erased AND i.expired IS NULL
  AND NOT coalesce(i.author, '') STARTS WITH 'erased-'
  AND NOT EXISTS { MATCH (s:Session {id: i.session}) WHERE coalesce(s.erased, false) }
WITH i LIMIT $batch
SET i.expired = true
RETURN count(i) AS marked
