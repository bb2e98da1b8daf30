// Renew a learning job's lease, while it runs as the claim that renews it ($attempt): a
// worker whose lease ran out, and whose job another claimed, renews nothing of the other's.
MATCH (j:LearningJob {id: $job, status: 'running'})
WHERE j.attempts = $attempt
SET j.leaseUntil = $until
RETURN j.id AS id
