// The oldest queued learning job of an agent whose queue is empty and that no job is learning
// for; locks that agent.
MATCH (j:LearningJob {status: 'queued'})-[:FOR_AGENT]->(a:Agent)
WHERE NOT a.id IN $busy
  AND NOT EXISTS { (:LearningJob {status: 'running'})-[:FOR_AGENT]->(a) }
  AND NOT EXISTS {
        MATCH (r:Run)-[:FOR_SESSION]->(:Session)-[:OF_AGENT]->(a)
        WHERE r.status IN ['queued', 'running'] }
WITH j, a ORDER BY j.queuedAt, j.id LIMIT 1
SET a._claim = true
REMOVE a._claim
RETURN j.id AS id, a.id AS claimKey
