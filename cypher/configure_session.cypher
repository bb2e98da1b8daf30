// S15: set or remove the session's overrides; the head stays, the revision grows.
MATCH (s:Session {id: $id})-[:OF_AGENT]->(:Agent)-[:IN_ORG]->(:Org {id: $org})
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
SET s.useOverride = CASE WHEN $setUse THEN $use ELSE s.useOverride END,
    s.generateOverride = CASE WHEN $setGenerate THEN $generate ELSE s.generateOverride END,
    s.revision = s.revision + 1
RETURN s.revision AS revision
