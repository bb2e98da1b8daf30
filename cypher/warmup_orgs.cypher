// The orgs the warm-up made (marked `warmup` when made: no other org is) before $before.
MATCH (o:Org)
WHERE o.warmup = true AND o.createdAt < $before
RETURN o.id AS org
ORDER BY org
