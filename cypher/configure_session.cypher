// S15: set or remove the session's overrides; the head stays, the revision grows.
// It takes the session's lock itself (as lock_session does) before it reads the head and the
// revision, so a Configure is this statement and session_views, in one: it needs none of the
// state lock_session answers. It changes nothing, and answers no row, unless the head and
// revision are still $expected and $revision (S12); the caller then asks lock_session why.
// It answers what it changed, and the org's settings as they are now: all that a view of the
// session at $revision needs to become the view after it (see `SessionView.configured`).
// (`orgSettings`, not `org`: it runs together with session_views, which answers `org`.)
// (the plan starts from the index seek on s; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (s:Session {id: $id})-[:OF_AGENT]->(:Agent)-[:IN_ORG]->(o {id: $org})
USING INDEX s:Session(id)
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
SET s._lock = true
REMOVE s._lock
WITH s, o
MATCH (s)-[:HEAD]->(h:Version)
WHERE h.id = $expected AND s.revision = $revision
SET s.useOverride = CASE WHEN $setUse THEN $use ELSE s.useOverride END,
    s.generateOverride = CASE WHEN $setGenerate THEN $generate ELSE s.generateOverride END,
    s.revision = s.revision + 1
// (not `revision`: session_views, run together with it, answers the session's revision)
RETURN s.revision AS configured, s.useOverride AS useOverride,
       s.generateOverride AS generateOverride,
       o {.memoryUse, .memoryGenerate, .agentMemory, .helperModel, .model} AS orgSettings
