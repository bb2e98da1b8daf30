// A run whose lease ran out (its process died: leases are renewed while a run works) goes back
// to the queue. It has written nothing yet (a run applies in one transaction), so running it
// again reads the same items. Each is read again under its lock: a run that ended (or was
// renewed) meanwhile stays as it is.
MATCH (lapsed:Run {status: 'running'})
WHERE coalesce(lapsed.leaseUntil, 0) < $now
// (every requeue locks them in one order)
WITH lapsed.id AS id
ORDER BY id
MATCH (r:Run {id: id})
SET r._lock = true
REMOVE r._lock
WITH r
WHERE r.status = 'running' AND coalesce(r.leaseUntil, 0) < $now
SET r.status = 'queued', r.leaseUntil = null
RETURN count(r) AS requeued
