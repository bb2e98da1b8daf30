MATCH (j:LearningJob {id: $job, status: 'running'})
SET j.leaseUntil = $until
RETURN j.id AS id
