// Each record of $records ({id, about}) names whom its dropped change is about (elementIds read
// in this transaction by dropped_without_about).
UNWIND $records AS r
MATCH (d:DroppedChange) WHERE elementId(d) = r.id
SET d.about = r.about
RETURN count(d) AS named
