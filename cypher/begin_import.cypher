// An import's checkpoint: which file (its digest) and how many of its records are in.
MERGE (i:Import {org: $org})
ON CREATE SET i.digest = $digest, i.lines = 0, i.startedAt = $now
RETURN i.digest AS digest, i.lines AS lines
