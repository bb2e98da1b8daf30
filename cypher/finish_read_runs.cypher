// Once a run has read every unprocessed item of its session (under the session's lock), the
// session's queued runs would each find nothing to read: they end here, succeeded, read
// nothing, as each would have when claimed, instead of each taking a worker's claim, reads
// and end of its own (a backlog of turns queues one run per turn).
MATCH (s:Session {id: $id})<-[:FOR_SESSION]-(r:Run {status: 'queued'})
SET r.status = 'succeeded', r.error = null, r.startedAt = $now, r.finishedAt = $now,
    r.attempts = r.attempts + 1
RETURN r.id AS id, r.model AS model
