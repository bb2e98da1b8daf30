// token create: the org if new, the person (or, with $service, the org's service) if new, and
// a token stored only as its hash that grants it, with its id and when it expires (or null).
// A new org the warm-up makes is marked `warmup` ($warmup is true; else null: no mark); a
// token for anyone else in a marked org takes the mark away, so the warm-up never deletes an
// org a client has come to share.
MERGE (o:Org {id: $org})
  ON CREATE SET o.memoryUse = true, o.memoryGenerate = true, o.agentMemory = true,
                o.model = $defaultModel, o.helperModel = $defaultModel, o.createdAt = $now,
                o.warmup = $warmup
  ON MATCH SET o.warmup = CASE WHEN $warmup THEN o.warmup END
WITH o
CALL (o) {
  WITH o WHERE $service IS NULL
  MERGE (p:Person {org: $org, id: $person})
    ON CREATE SET p.createdAt = $now
  MERGE (p)-[:MEMBER_OF]->(o)
  RETURN p AS grantee
  UNION
  WITH o WHERE $service IS NOT NULL
  MERGE (svc:Service {org: $org, id: $service})
    ON CREATE SET svc.createdAt = $now
  MERGE (svc)-[:SERVES]->(o)
  RETURN svc AS grantee
}
CREATE (t:Token {id: $id, hash: $hash, createdAt: $now, expiresAt: $expiresAt})
       -[:GRANTS]->(grantee)
RETURN o.id AS org
