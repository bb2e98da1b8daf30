// The end of an import: a batch of its nodes loses the `Importing` mark and file reference.
MATCH (n:Importing) WHERE n.importRef STARTS WITH $prefix
WITH n LIMIT $batch
REMOVE n:Importing, n.importRef
RETURN count(n) AS unmarked
