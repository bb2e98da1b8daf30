// One batch of an import's relationships between nodes it imported, and its checkpoint.
MATCH (i:Import {org: $org, digest: $digest}) WHERE i.lines = $from
UNWIND $relationships AS row
MATCH (a:Importing {importRef: row.start})
MATCH (b:Importing {importRef: row.end})
CREATE (a)-[r:$(row.type)]->(b)
SET r = row.properties
WITH i, count(r) AS made
SET i.lines = $to
RETURN made
