// Agent entries made before an entry kept its sources (keep_agent_sources), a batch at a time:
// the ids of their CURRENT changes.
MATCH (e:AgentEntry)-[:CURRENT]->(c:AgentChange)
WHERE e.sourceUids IS NULL AND NOT coalesce(e.erased, false)
RETURN c.id AS change
LIMIT $batch
