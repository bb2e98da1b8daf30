// Claim a run after the session's lock is held: checked again, so no two workers claim one
// session at once.
MATCH (r:Run {id: $run})-[:FOR_SESSION]->(s:Session)
WHERE r.status = 'queued' AND NOT EXISTS { (s)<-[:FOR_SESSION]-(:Run {status: 'running'}) }
SET r.status = 'running', r.startedAt = $now, r.attempts = r.attempts + 1
RETURN r.id AS id
