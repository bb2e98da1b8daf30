// An import refused before any record of it was written: its checkpoint goes, so the org's
// name is free for another file (an import that wrote records keeps its checkpoint, for
// org delete to find them by).
// The checkpoint is locked before its count is read: an import whose first batch commits
// meanwhile has written records, and keeps it.
MATCH (i:Import {org: $org, digest: $digest})
SET i._lock = true
REMOVE i._lock
WITH i
WHERE i.lines = 0
DELETE i
RETURN count(*) AS abandoned
