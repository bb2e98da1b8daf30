// A run whose lease ran out (its process died: leases are renewed while a run works) goes back
// to the queue. It has written nothing yet (a run applies in one transaction), so running it
// again reads the same items.
MATCH (r:Run {status: 'running'})
WHERE coalesce(r.leaseUntil, 0) < $now
SET r.status = 'queued', r.leaseUntil = null
RETURN count(r) AS requeued
