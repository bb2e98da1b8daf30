// A learning job whose lease ran out (its process died) goes back to the queue. What it
// applied is recorded per session with the items it learned from, so running it again reads
// only what is still to learn: nothing is learned twice.
MATCH (j:LearningJob {status: 'running'})
WHERE coalesce(j.leaseUntil, 0) < $now
SET j.status = 'queued', j.leaseUntil = null
RETURN count(j) AS requeued
