// An import refused before any record of it was written: its checkpoint goes, so the org's
// name is free for another file (an import that wrote records keeps its checkpoint, for
// org delete to find them by).
MATCH (i:Import {org: $org, digest: $digest})
WHERE i.lines = 0
DELETE i
RETURN count(*) AS abandoned
