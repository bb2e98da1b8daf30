// Claim a run after the session's lock is held: checked again, so no two workers claim one
// session at once. The lease says how long the claim holds unless the worker renews it.
MATCH (r:Run {id: $job})-[:FOR_SESSION]->(s:Session)
WHERE r.status = 'queued' AND NOT EXISTS { (s)<-[:FOR_SESSION]-(:Run {status: 'running'}) }
SET r.status = 'running', r.startedAt = $now, r.attempts = r.attempts + 1,
    r.leaseUntil = $now + $lease
RETURN r.id AS id, r.attempts AS attempt
