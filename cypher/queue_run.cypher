// A durable consolidation job, written in the same transaction as what asks for it.
MATCH (s:Session {id: $id})
OPTIONAL MATCH (t:Turn {id: $run.turn})
CREATE (r:Run {id: $run.id, status: 'queued', model: $run.model, trigger: $run.trigger,
               queuedAt: $run.at, attempts: 0})
CREATE (r)-[:FOR_SESSION]->(s)
FOREACH (x IN CASE WHEN t IS NULL THEN [] ELSE [t] END | CREATE (r)-[:FOR_TURN]->(x))
RETURN r.id AS id
