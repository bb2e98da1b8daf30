// The Session view's own fields; the memory comes from memory_at for the head.
UNWIND $ids AS sid
MATCH (s:Session {id: sid})-[:OF_AGENT]->(a:Agent)-[:IN_ORG]->(o:Org {id: $org})
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
MATCH (s)-[:HEAD]->(h:Version)
OPTIONAL MATCH (s)-[:WITH]->(p:Person)
OPTIONAL MATCH (s)-[:STARTED_FROM]->(parent:Session)
OPTIONAL MATCH (s)-[f:FORKED_FROM]->(source:Session)
RETURN s {.id, .kind, .revision, .model, .useOverride, .generateOverride, .createdAt,
          agent: a.id, head: h.id, person: p.id, parent: parent.id,
          forkedFrom: source.id, forkedAt: f.at} AS session,
       o {.memoryUse, .memoryGenerate, .agentMemory, .helperModel, .model} AS org
