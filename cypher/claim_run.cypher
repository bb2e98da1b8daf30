// Claim a run after the session's lock is held: checked again, so no two workers claim one
// session at once, and a session's runs start in the order they were queued. `next_run` may
// name a later run when an earlier one went back to the queue (its process died) while it
// looked; the claim then takes nothing. The lease says how long the claim holds unless the
// worker renews it.
MATCH (r:Run {id: $job})-[:FOR_SESSION]->(s:Session)
WHERE r.status = 'queued' AND NOT EXISTS { (s)<-[:FOR_SESSION]-(:Run {status: 'running'}) }
  AND NOT EXISTS {
        MATCH (s)<-[:FOR_SESSION]-(o:Run {status: 'queued'})
        WHERE o.queuedAt < r.queuedAt OR (o.queuedAt = r.queuedAt AND o.id < r.id) }
SET r.status = 'running', r.startedAt = $now, r.attempts = r.attempts + 1,
    r.leaseUntil = $now + $lease
RETURN r.id AS id, r.attempts AS attempt
