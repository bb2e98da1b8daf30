// Take the agent's write lock before reading its memory's version (see lock_session): of two
// writers that expect the same version, only one passes.
// (the plan starts from the index seek on a; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (a:Agent {id: $agent})-[:IN_ORG]->({id: $org})
USING INDEX a:Agent(id)
SET a._lock = true
REMOVE a._lock
RETURN coalesce(a.memoryVersion, 0) AS version, a.shared AS shared
