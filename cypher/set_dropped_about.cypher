// Each record of $records ({id, about}) names whom its dropped change is about (elementIds read
// in this transaction by dropped_without_about). Each is locked first and read again: an
// erasure that withheld it meanwhile (`erased`) left it naming no one, and so it stays.
UNWIND $records AS r
MATCH (d:DroppedChange) WHERE elementId(d) = r.id
SET d._lock = true
REMOVE d._lock
WITH d, r
WHERE d.about IS NULL AND NOT coalesce(d.erased, false)
SET d.about = r.about
RETURN count(d) AS named
