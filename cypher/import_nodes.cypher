// One batch of an import's nodes, and its checkpoint moved past them, in one transaction; a
// batch applies only at the checkpoint it was read from, so a rerun never applies one twice.
// Each node is marked `Importing` (with its file reference) until the import ends.
// The checkpoint is locked before it is read, so two imports of the file at once never both
// pass it for one batch: the second reads the first's checkpoint, and applies nothing.
MATCH (held:Import {org: $org, digest: $digest})
SET held._lock = true
REMOVE held._lock
WITH held
MATCH (i:Import {org: $org, digest: $digest}) WHERE i.lines = $from
UNWIND $nodes AS row
MERGE (n:Importing {importRef: row.ref})
SET n:$(row.labels)
SET n += row.properties
WITH i, count(n) AS made
SET i.lines = $to
RETURN made
