// Claim a learning job after the agent's lock is held: checked again, so no two workers learn
// for one agent at once, none while a consolidation of the agent is queued or running, and an
// agent's jobs start in the order they were queued (`next_learning_job` may name a later job
// when an earlier one went back to the queue while it looked; the claim then takes nothing).
MATCH (j:LearningJob {id: $job})-[:FOR_AGENT]->(a:Agent)
WHERE j.status = 'queued'
  AND NOT EXISTS { (:LearningJob {status: 'running'})-[:FOR_AGENT]->(a) }
  AND NOT EXISTS {
        MATCH (r:Run)-[:FOR_SESSION]->(:Session)-[:OF_AGENT]->(a)
        WHERE r.status IN ['queued', 'running'] }
  AND NOT EXISTS {
        MATCH (o:LearningJob {status: 'queued'})-[:FOR_AGENT]->(a)
        WHERE o.queuedAt < j.queuedAt OR (o.queuedAt = j.queuedAt AND o.id < j.id) }
SET j.status = 'running', j.startedAt = $now, j.attempts = j.attempts + 1,
    j.leaseUntil = $now + $lease
RETURN j.id AS id, j.attempts AS attempt
