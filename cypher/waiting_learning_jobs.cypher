// Whether any learning job waits for a worker, or ran out of its lease: read first, so an idle
// worker opens no write transaction.
RETURN EXISTS { MATCH (:LearningJob {status: 'queued'}) } AS queued,
       EXISTS { MATCH (j:LearningJob {status: 'running'}) WHERE coalesce(j.leaseUntil, 0) < $now }
         AS expired
