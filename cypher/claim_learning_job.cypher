// Claim a learning job after the agent's lock is held: checked again, so no two workers learn
// for one agent at once, and none while a consolidation of the agent is queued or running.
MATCH (j:LearningJob {id: $job})-[:FOR_AGENT]->(a:Agent)
WHERE j.status = 'queued'
  AND NOT EXISTS { (:LearningJob {status: 'running'})-[:FOR_AGENT]->(a) }
  AND NOT EXISTS {
        MATCH (r:Run)-[:FOR_SESSION]->(:Session)-[:OF_AGENT]->(a)
        WHERE r.status IN ['queued', 'running'] }
SET j.status = 'running', j.startedAt = $now, j.attempts = j.attempts + 1,
    j.leaseUntil = $now + $lease
RETURN j.id AS id, j.attempts AS attempt
