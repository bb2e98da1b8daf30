// One batch of an import's nodes, and its checkpoint moved past them, in one transaction; a
// batch applies only at the checkpoint it was read from, so a rerun never applies one twice.
// Each node is marked `Importing` (with its file reference) until the import ends.
MATCH (i:Import {org: $org, digest: $digest}) WHERE i.lines = $from
UNWIND $nodes AS row
MERGE (n:Importing {importRef: row.ref})
SET n:$(row.labels)
SET n += row.properties
WITH i, count(n) AS made
SET i.lines = $to
RETURN made
