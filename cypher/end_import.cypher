// An import that completed: its checkpoint goes.
MATCH (i:Import {org: $org, digest: $digest})
DELETE i
RETURN count(*) AS ended
