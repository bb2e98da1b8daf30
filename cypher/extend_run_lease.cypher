MATCH (r:Run {id: $job, status: 'running'})
SET r.leaseUntil = $until
RETURN r.id AS id
