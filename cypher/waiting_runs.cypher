// Whether any consolidation run waits for a worker, or ran out of its lease: read first, so an
// idle worker opens no write transaction.
RETURN EXISTS { MATCH (:Run {status: 'queued'}) } AS queued,
       EXISTS { MATCH (r:Run {status: 'running'}) WHERE coalesce(r.leaseUntil, 0) < $now }
         AS expired
