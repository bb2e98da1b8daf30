// A session starts with one empty version: its first head.
// (the plan starts from the index seek on a; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (a:Agent {id: $session.agent})-[:IN_ORG]->(o {id: $org})
USING INDEX a:Agent(id)
MATCH (p:Person {org: $org, id: $session.person})
// The person's lock, then whether an erasure of them runs (`erasing`, which begin_erasure
// sets under the same lock): a new session of theirs is in the erasure's scope, or refused.
SET p._lock = true
REMOVE p._lock
WITH a, o, p
WHERE p.erasing IS NULL AND p.erased IS NULL
OPTIONAL MATCH (parent:Session {id: $session.parent})-[:OF_AGENT]->(:Agent)-[:IN_ORG]->(o)
CREATE (s:Session {id: $session.id, kind: $session.kind, revision: 0, model: $session.model,
                   createdAt: $session.createdAt, processed: [], processedSeq: 0})
CREATE (s)-[:OF_AGENT]->(a)
CREATE (s)-[:WITH]->(p)
CREATE (v:Version {id: $session.head, depth: 0, items: 0, cause: 'start', at: $session.createdAt,
                   revision: 0})
CREATE (s)-[:HEAD]->(v)
CREATE (v)-[:OF]->(s)
FOREACH (x IN CASE WHEN parent IS NULL THEN [] ELSE [parent] END |
  CREATE (s)-[:STARTED_FROM]->(x))
RETURN s.id AS id
