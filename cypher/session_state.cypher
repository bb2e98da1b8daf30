MATCH (s:Session {id: $id})-[:OF_AGENT]->(a:Agent)-[:IN_ORG]->(o:Org {id: $org})
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
MATCH (s)-[:HEAD]->(h:Version)
OPTIONAL MATCH (s)-[:WITH]->(p:Person)
RETURN s.revision AS revision, h.id AS head, h.depth AS depth, h.items AS items,
       s.kind AS kind, p.id AS person, a.shared AS agentShared, s.model AS model, a.model AS agentModel, a.id AS agent,
       s.useOverride AS useOverride, s.generateOverride AS generateOverride,
       o {.memoryUse, .memoryGenerate, .agentMemory, .helperModel, .model} AS org
