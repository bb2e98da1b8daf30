// A run whose lease ran out (its process died: leases are renewed while a run works) goes back
// to the queue. It has written nothing yet (a run applies in one transaction), so running it
// again reads the same items. Each is read again under its lock: a run that ended (or was
// renewed) meanwhile stays as it is. A lease that ran out is a lapse, counted on the run; a
// lease a stopping process ended (0) is none. A run whose lease lapsed $most times (the run
// may be what ends its process) is not queued again: it is answered, with the attempt that
// ends it, to be ended failed, and its lease is ended (0): no further lapse is counted, and
// each look answers it until one ends it.
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
SET r.lapses = coalesce(r.lapses, 0) + CASE WHEN r.leaseUntil = 0 THEN 0 ELSE 1 END
WITH r, r.lapses >= $most AS spent
SET r.status = CASE WHEN spent THEN r.status ELSE 'queued' END,
    r.leaseUntil = CASE WHEN spent THEN 0 ELSE null END
RETURN count(CASE WHEN spent THEN null ELSE r END) AS requeued,
       collect(CASE WHEN spent THEN {job: r.id, attempt: r.attempts} END) AS spent
