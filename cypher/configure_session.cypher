// S15: set or remove the session's overrides; the head stays, the revision grows.
// Run after lock_session (the session's lock is held); it changes nothing, and answers no row,
// unless the head and revision are still $expected and $revision (S12).
MATCH (s:Session {id: $id})-[:OF_AGENT]->(:Agent)-[:IN_ORG]->(:Org {id: $org})
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
MATCH (s)-[:HEAD]->(h:Version)
WHERE h.id = $expected AND s.revision = $revision
SET s.useOverride = CASE WHEN $setUse THEN $use ELSE s.useOverride END,
    s.generateOverride = CASE WHEN $setGenerate THEN $generate ELSE s.generateOverride END,
    s.revision = s.revision + 1
// (not `revision`: lock_session, run together with it, answers the revision it checked)
RETURN s.revision AS configured
