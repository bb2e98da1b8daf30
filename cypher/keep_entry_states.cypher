// Entries made before an entry kept its state (see session_views), a batch at a time: each
// takes the state of its CURRENT change. Each entry's lock is taken before its CURRENT change
// is read, so a write in flight (which writes the entry too) is never undone. What an entry
// keeps is what its CURRENT change already showed, so no revision moves. How many.
MATCH (e:Entry)
WHERE e.change IS NULL AND EXISTS { (e)-[:CURRENT]->(:Change) }
WITH e LIMIT $batch
SET e._lock = true
REMOVE e._lock
WITH e
MATCH (e)-[:CURRENT]->(c:Change)
CALL (c) {
  OPTIONAL MATCH (c)-[:CITES]->(i:Item)
  WITH i ORDER BY i.seq
  RETURN collect(i.id) AS sources, collect(i.uid) AS sourceUids
}
SET e.content = c.content, e.kind = c.kind, e.status = c.status, e.updatedAt = c.at,
    e.change = c.id, e.sources = sources, e.sourceUids = sourceUids
RETURN count(e) AS kept
