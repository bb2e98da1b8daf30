// Take the agent's write lock before reading its memory's version (see lock_session): of two
// writers that expect the same version, only one passes. For a person's write, that person's
// lock first (in the order create_session takes the two), then whether they are still a
// person of the org: not one whose erasure runs (`erasing`, which begin_erasure sets under the
// same lock) or has ended (the person renamed): no change of theirs is made for it to miss.
// (the plan starts from the index seek on a; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
OPTIONAL MATCH (p:Person {org: $org, id: $person})
FOREACH (locked IN CASE WHEN p IS NULL THEN [] ELSE [p] END |
  SET locked._lock = true
  REMOVE locked._lock)
WITH p
MATCH (a:Agent {id: $agent})-[:IN_ORG]->({id: $org})
USING INDEX a:Agent(id)
SET a._lock = true
REMOVE a._lock
RETURN coalesce(a.memoryVersion, 0) AS version, a.shared AS shared,
       $person IS NOT NULL AND (p IS NULL OR p.erasing IS NOT NULL OR p.erased IS NOT NULL)
       AS gone
