// An import's checkpoint: which file (its digest), how many of its records are in, and how
// the file references of its nodes begin (`refs`: org delete finds them by it).
// A resumed import keeps the references it began with.
MERGE (i:Import {org: $org})
ON CREATE SET i.digest = $digest, i.lines = 0, i.startedAt = $now
SET i.refs = coalesce(i.refs, $refs)
RETURN i.digest AS digest, i.lines AS lines, i.refs AS refs
