// The oldest queued run of a session that has none running; locks that session.
MATCH (r:Run {status: 'queued'})-[:FOR_SESSION]->(s:Session)
WHERE NOT EXISTS { (s)<-[:FOR_SESSION]-(:Run {status: 'running'}) }
  AND NOT s.id IN $busy
WITH r, s ORDER BY r.queuedAt, r.id LIMIT 1
SET s._claim = true
REMOVE s._claim
RETURN r.id AS id, s.id AS claimKey
