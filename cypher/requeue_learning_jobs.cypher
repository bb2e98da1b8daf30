// A learning job whose lease ran out (its process died) goes back to the queue. What it
// applied is recorded per session with the items it learned from, so running it again reads
// only what is still to learn: nothing is learned twice. Each is read again under its lock: a
// job that ended (or was renewed) meanwhile stays as it is. A lease that ran out is a lapse,
// counted on the job; a lease a stopping process ended (0) is none. A job whose lease lapsed
// $most times (the job may be what ends its process) is not queued again: it is answered, with
// the attempt that ends it, to be ended failed, and its lease is ended (0): no further lapse
// is counted, and each look answers it until one ends it.
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
SET j.lapses = coalesce(j.lapses, 0) + CASE WHEN j.leaseUntil = 0 THEN 0 ELSE 1 END
WITH j, j.lapses >= $most AS spent
SET j.status = CASE WHEN spent THEN j.status ELSE 'queued' END,
    j.leaseUntil = CASE WHEN spent THEN 0 ELSE null END
RETURN count(CASE WHEN spent THEN null ELSE j END) AS requeued,
       collect(CASE WHEN spent THEN {job: j.id, attempt: j.attempts} END) AS spent
