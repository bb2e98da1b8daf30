// A fork: a new session whose first version continues the source's history at $fork.at,
// with the source's overrides (S4) and person, linked to the source by FORKED_FROM naming the
// version.
// (the plan starts from the index seek on src; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (src:Session {id: $source})-[:OF_AGENT]->(a:Agent)-[:IN_ORG]->({id: $org})
USING INDEX src:Session(id)
WHERE $person IS NULL OR EXISTS { (src)-[:WITH]->(:Person {id: $person}) }
MATCH (at:Version {id: $fork.at})
MATCH (src)-[:WITH]->(p:Person)
// the person's lock and erasure mark, as create_session reads them (no row while it runs)
SET p._lock = true
REMOVE p._lock
WITH src, a, at, p
WHERE p.erasing IS NULL
OPTIONAL MATCH (src)-[:STARTED_FROM]->(parent:Session)
CREATE (f:Session {id: $fork.id, kind: src.kind, revision: 0, model: src.model,
                   useOverride: src.useOverride, generateOverride: src.generateOverride,
                   createdAt: $fork.createdAt, processed: $fork.processed,
                   processedSeq: $fork.processedSeq,
                   clientItemIds: coalesce(src.clientItemIds, false)})
CREATE (f)-[:OF_AGENT]->(a)
CREATE (f)-[:WITH]->(p)
CREATE (f)-[:FORKED_FROM {at: at.id, createdAt: $fork.createdAt}]->(src)
FOREACH (x IN CASE WHEN parent IS NULL THEN [] ELSE [parent] END |
  CREATE (f)-[:STARTED_FROM]->(x))
CREATE (v:Version {id: $fork.head, depth: at.depth + 1, items: at.items, cause: 'fork',
                   at: $fork.createdAt, revision: 0})
CREATE (v)-[:PARENT]->(at)
CREATE (v)-[:OF]->(f)
CREATE (f)-[:HEAD]->(v)
WITH f, v, p
// (who forked: the session's person, or the org's service token that asked, $service)
OPTIONAL MATCH (svc:Service {org: $org, id: $service})
WITH f, v, coalesce(svc, p) AS maker
// S3: the fork's memory is a copy: one change per entry, made by the fork (MADE_BY who forked),
// linked to the change it copies and citing the same items, and one Entry node per key linked
// to the entry it was copied from. The copy keeps the entry's updatedAt and is the entry's
// CURRENT change, and the entry keeps its state (see session_views).
CALL (f, v, maker) {
  UNWIND $copies AS copy
  MATCH (original:Change {id: copy.from})
  CREATE (c:Change {id: copy.id, op: 'copy', maker: 'fork', key: original.key,
                    content: original.content, kind: original.kind, status: original.status,
                    at: original.at, copiedAt: $fork.createdAt,
                    beforeContent: original.content, beforeKind: original.kind,
                    beforeStatus: original.status, revision: 0, head: v.id})
  CREATE (c)-[:AT]->(v)
  CREATE (c)-[:IN_SESSION]->(f)
  CREATE (c)-[:MADE_BY]->(maker)
  CREATE (c)-[:COPIED_FROM]->(original)
  CREATE (c)-[:REPLACES]->(original)
  MERGE (e:Entry {session: f.id, key: original.key})
    ON CREATE SET e.createdAt = $fork.createdAt
  MERGE (f)-[:HAS_ENTRY]->(e)
  CREATE (c)-[:OF_ENTRY]->(e)
  CREATE (e)-[:CURRENT]->(c)
  WITH c, e, original
  OPTIONAL MATCH (original)-[:OF_ENTRY]->(source:Entry)
  FOREACH (x IN CASE WHEN source IS NULL THEN [] ELSE [source] END |
    MERGE (e)-[:COPIED_FROM]->(x))
  WITH c, e, original
  CALL (c, original) {
    OPTIONAL MATCH (original)-[:CITES]->(i:Item)
    FOREACH (x IN CASE WHEN i IS NULL THEN [] ELSE [i] END | CREATE (c)-[:CITES]->(x))
    WITH i ORDER BY i.seq
    RETURN collect(i.id) AS sources, collect(i.uid) AS sourceUids
  }
  SET e.content = c.content, e.kind = c.kind, e.status = c.status, e.updatedAt = c.at,
      e.change = c.id, e.sources = sources, e.sourceUids = sourceUids
}
RETURN f.id AS id
