// Take the agent's write lock before reading its memory's version (see lock_session): of two
// writers that expect the same version, only one passes.
MATCH (a:Agent {id: $agent})-[:IN_ORG]->(:Org {id: $org})
SET a._lock = true
REMOVE a._lock
RETURN coalesce(a.memoryVersion, 0) AS version, a.shared AS shared
