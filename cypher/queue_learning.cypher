// A2: queue a learning job for the agent when its queue is empty (no consolidation run of any
// of its sessions queued or running), none is queued already, and some turn left items to
// learn from. Run under the agent's lock (lock_agent), in the transaction that empties the
// queue, so of two runs ending at once exactly one queues the job.
MATCH (a:Agent {id: $agent})
WHERE NOT EXISTS {
        MATCH (r:Run)-[:FOR_SESSION]->(:Session)-[:OF_AGENT]->(a)
        WHERE r.status IN ['queued', 'running'] }
  AND NOT EXISTS { (:LearningJob {status: 'queued'})-[:FOR_AGENT]->(a) }
  AND EXISTS { (a)<-[:OF_AGENT]-(:Session)<-[:IN_SESSION]-(:Turn {learnPending: true}) }
CREATE (j:LearningJob {id: $job.id, agent: a.id, status: 'queued', queuedAt: $job.at,
                       attempts: 0})
CREATE (j)-[:FOR_AGENT]->(a)
RETURN j.id AS id
