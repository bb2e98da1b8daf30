// Renew a run's lease, while it runs as the claim that renews it ($attempt): a worker whose
// lease ran out, and whose run another claimed, renews nothing of the other's.
MATCH (r:Run {id: $job, status: 'running'})
WHERE r.attempts = $attempt
SET r.leaseUntil = $until
RETURN r.id AS id
