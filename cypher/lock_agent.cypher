// Take the agent's write lock before reading its memory's version (see lock_session): of two
// writers that expect the same version, only one passes. For a person's write, that person's
// lock too, then whether an erasure of them runs (`erasing`, which begin_erasure sets under
// the same lock): once it has begun, no change of theirs is made for it to miss.
// (the plan starts from the index seek on a; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (a:Agent {id: $agent})-[:IN_ORG]->({id: $org})
USING INDEX a:Agent(id)
SET a._lock = true
REMOVE a._lock
WITH a
OPTIONAL MATCH (p:Person {org: $org, id: $person})
FOREACH (locked IN CASE WHEN p IS NULL THEN [] ELSE [p] END |
  SET locked._lock = true
  REMOVE locked._lock)
RETURN coalesce(a.memoryVersion, 0) AS version, a.shared AS shared,
       p.erasing IS NOT NULL AS erasing
