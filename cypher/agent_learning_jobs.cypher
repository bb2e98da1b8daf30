// Each agent's learning jobs, newest first (ids; find_learning_jobs has the rest).
UNWIND $agents AS aid
// (the plan starts from the index seek on a; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (a:Agent {id: aid})-[:IN_ORG]->({id: $org})
USING INDEX a:Agent(id)
MATCH (j:LearningJob)-[:FOR_AGENT]->(a)
WITH aid, j ORDER BY j.queuedAt DESC, j.id
RETURN aid, collect(j.id) AS jobs
