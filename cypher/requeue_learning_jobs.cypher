// A learning job whose lease ran out (its process died) goes back to the queue. What it
// applied is recorded per session with the items it learned from, so running it again reads
// only what is still to learn: nothing is learned twice. Each is read again under its lock: a
// job that ended (or was renewed) meanwhile stays as it is.
MATCH (lapsed:LearningJob {status: 'running'})
WHERE coalesce(lapsed.leaseUntil, 0) < $now
// (every requeue locks them in one order)
WITH lapsed.id AS id
ORDER BY id
MATCH (j:LearningJob {id: id})
SET j._lock = true
REMOVE j._lock
WITH j
WHERE j.status = 'running' AND coalesce(j.leaseUntil, 0) < $now
SET j.status = 'queued', j.leaseUntil = null
RETURN count(j) AS requeued
