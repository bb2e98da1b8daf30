// Whether a run still runs as the claim that applies it ($attempt), read under its lock: a
// worker whose lease ran out while its model worked, and whose run another claimed (or the
// queue took back), applies nothing of what it read.
MATCH (r:Run {id: $job})
SET r._lock = true
REMOVE r._lock
WITH r
WHERE r.status = 'running' AND r.attempts = $attempt
RETURN r.id AS id
