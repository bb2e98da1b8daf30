// Whether an org of this name exists, and the unfinished import into it, if any.
OPTIONAL MATCH (o:Org {id: $org})
OPTIONAL MATCH (i:Import {org: $org})
RETURN o IS NOT NULL AS exists, i {.digest, .lines} AS import
