// token create: the org and person if new, and a token stored only as its hash.
MERGE (o:Org {id: $org})
  ON CREATE SET o.memoryUse = true, o.memoryGenerate = true, o.agentMemory = true,
                o.model = $defaultModel, o.helperModel = $defaultModel, o.createdAt = $now
MERGE (p:Person {org: $org, id: $person})
  ON CREATE SET p.createdAt = $now
MERGE (p)-[:MEMBER_OF]->(o)
CREATE (t:Token {hash: $hash, createdAt: $now})-[:GRANTS]->(p)
RETURN o.id AS org, p.id AS person
