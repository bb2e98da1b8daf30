// Each agent's learning jobs, newest first (ids; find_learning_jobs has the rest).
UNWIND $agents AS aid
MATCH (a:Agent {id: aid})-[:IN_ORG]->(:Org {id: $org})
MATCH (j:LearningJob)-[:FOR_AGENT]->(a)
WITH aid, j ORDER BY j.queuedAt DESC, j.id
RETURN aid, collect(j.id) AS jobs
