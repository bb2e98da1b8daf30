// How a consolidation run or learning job ended: its status, model, the claim (attempt) that
// ended it, and the reasons of the changes it dropped (read once it is over, for the metrics of
// the process that ran it).
OPTIONAL MATCH (r:Run {id: $id})
OPTIONAL MATCH (j:LearningJob {id: $id})
WITH coalesce(r, j) AS job
WHERE job IS NOT NULL
RETURN job.status AS status, job.model AS model, job.attempts AS attempt,
       [(job)-[:DROPPED]->(d:DroppedChange) | d.reason] AS dropped
