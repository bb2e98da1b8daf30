// A follow-up run for the rest of a backlog that one prompt could not hold, written
// in the applying transaction; none when a run of the session is queued already.
MATCH (s:Session {id: $id})
WHERE NOT EXISTS { (s)<-[:FOR_SESSION]-(:Run {status: 'queued'}) }
CREATE (r:Run {id: $run.id, status: 'queued', model: $run.model, trigger: 'backlog',
               queuedAt: $run.at, attempts: 0})
CREATE (r)-[:FOR_SESSION]->(s)
RETURN r.id AS id
