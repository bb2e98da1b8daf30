// Sessions made before their head's state was kept, a batch at a time: each with
// its head and org, so the state can be derived once (memory_at) and kept (keep_state).
MATCH (s:Session)-[:HEAD]->(h:Version)
WHERE s.processedSeq IS NULL
MATCH (s)-[:OF_AGENT]->(:Agent)-[:IN_ORG]->(o:Org)
RETURN s.id AS id, h.id AS head, o.id AS org
LIMIT $batch
