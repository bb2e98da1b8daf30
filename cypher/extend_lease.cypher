MATCH (r:Run {id: $run, status: 'running'})
SET r.leaseUntil = $until
RETURN r.id AS id
