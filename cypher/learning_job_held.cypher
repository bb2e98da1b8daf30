// Whether a learning job still runs as the claim that applies it ($attempt), read under its
// lock: a worker whose lease ran out while its model worked, and whose job another claimed (or
// the queue took back), applies and records nothing of what it read.
MATCH (j:LearningJob {id: $job})
SET j._lock = true
REMOVE j._lock
WITH j
WHERE j.status = 'running' AND j.attempts = $attempt
RETURN j.id AS id
