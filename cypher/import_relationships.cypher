// One batch of an import's relationships between nodes it imported, and its checkpoint.
// The checkpoint is locked before it is read, so two imports of the file at once never both
// pass it for one batch: the second reads the first's checkpoint, and applies nothing.
MATCH (held:Import {org: $org, digest: $digest})
SET held._lock = true
REMOVE held._lock
WITH held
MATCH (i:Import {org: $org, digest: $digest}) WHERE i.lines = $from
UNWIND $relationships AS row
MATCH (a:Importing {importRef: row.start})
MATCH (b:Importing {importRef: row.end})
CREATE (a)-[r:$(row.type)]->(b)
SET r = row.properties
WITH i, count(r) AS made
SET i.lines = $to
RETURN made
