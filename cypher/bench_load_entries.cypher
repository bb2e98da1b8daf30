// Benchmark data only (bench/search.py): sessions of one agent, each with a head of two
// versions, its entries' changes at the first and some replaced at the second (so search must
// keep the current one), and one agent's entries; the shape the service's own writes leave:
// each entry keeps its CURRENT change and that change's state, each session its processed
// ledger (session_views and search read both).
MATCH (a:Agent {id: $agent})
UNWIND $sessions AS ses
MATCH (p:Person {org: $org, id: ses.person})
CREATE (s:Session {id: ses.id, kind: 'chat', revision: 2, createdAt: $at, processed: [],
                   processedSeq: 0})
CREATE (s)-[:OF_AGENT]->(a)
CREATE (s)-[:WITH]->(p)
CREATE (v1:Version {id: ses.id + '-v1', depth: 1, items: 0, cause: 'remember', at: $at})
CREATE (v2:Version {id: ses.id + '-v2', depth: 2, items: 0, cause: 'remember', at: $at})
CREATE (v1)-[:OF]->(s)
CREATE (v2)-[:OF]->(s)
CREATE (v2)-[:PARENT]->(v1)
CREATE (s)-[:HEAD]->(v2)
WITH s, v1, v2, ses
UNWIND ses.entries AS en
MERGE (e:Entry {session: s.id, key: en.key})
  ON CREATE SET e.createdAt = $at
MERGE (s)-[:HAS_ENTRY]->(e)
CREATE (c:Change {id: en.id, op: 'remember', maker: 'person', key: en.key, content: en.content,
                  kind: 'fact', status: 'active', at: $at, revision: 1, head: v1.id})
CREATE (c)-[:AT]->(v1)
CREATE (c)-[:IN_SESSION]->(s)
CREATE (c)-[:OF_ENTRY]->(e)
FOREACH (newer IN CASE WHEN en.newer IS NULL THEN [] ELSE [en.newer] END |
  CREATE (n:Change {id: en.id + '-2', op: 'remember', maker: 'person', key: en.key,
                    content: newer, kind: 'fact', status: 'active', at: $at + 1, revision: 2,
                    head: v2.id})
  CREATE (n)-[:AT]->(v2)
  CREATE (n)-[:IN_SESSION]->(s)
  CREATE (n)-[:OF_ENTRY]->(e)
  CREATE (n)-[:REPLACES]->(c))
WITH e, c, en
OPTIONAL MATCH (n:Change {id: en.id + '-2'})
WITH e, coalesce(n, c) AS now
CREATE (e)-[:CURRENT]->(now)
SET e.content = now.content, e.kind = now.kind, e.status = now.status, e.updatedAt = now.at,
    e.change = now.id, e.sources = [], e.sourceUids = []
RETURN count(*) AS loaded
