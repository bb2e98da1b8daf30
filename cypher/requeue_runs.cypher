// At start: a run left running by a process that died goes back to the queue. It has written
// nothing yet (a run applies in one transaction), so running it again reads the same items.
MATCH (r:Run {status: 'running'})
SET r.status = 'queued'
RETURN count(r) AS requeued
