// One version of an agent's memory (A10, A11): each change is recorded as an AgentChange with
// before and after, what made it (a person, the org's service, a learning job or a promotion)
// and the items and sessions it cites (A3); each entry keeps its current state beside that
// record. The caller holds the agent's lock (lock_agent) and gives the next version.
// (the plan starts from the index seek on a; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (a:Agent {id: $agent})-[:IN_ORG]->(o {id: $org})
USING INDEX a:Agent(id)
SET a.memoryVersion = $version
WITH a
UNWIND $changes AS ch
MERGE (e:AgentEntry {agent: a.id, key: ch.key, owner: ch.owner})
  ON CREATE SET e.createdAt = $at, e.visibility = ch.visibility
MERGE (a)-[:HAS_MEMORY]->(e)
WITH a, e, ch
OPTIONAL MATCH (e)-[current:CURRENT]->(prev:AgentChange)
CREATE (c:AgentChange {id: ch.id, agent: a.id, version: $version, op: ch.op, maker: $maker,
                       person: $person, key: ch.key, owner: ch.owner, content: ch.content,
                       kind: ch.kind, status: ch.status, about: ch.about,
                       visibility: e.visibility, beforeContent: prev.content,
                       beforeKind: prev.kind, beforeStatus: prev.status, at: $at})
CREATE (c)-[:OF_ENTRY]->(e)
DELETE current
CREATE (e)-[:CURRENT]->(c)
SET e.content = ch.content, e.kind = ch.kind, e.status = ch.status, e.about = ch.about,
    e.updatedAt = $at, e.change = ch.id, e.version = $version, e.erased = null
FOREACH (x IN CASE WHEN prev IS NULL THEN [] ELSE [prev] END | CREATE (c)-[:REPLACES]->(x))
WITH c, ch
CALL (c, ch) {
  UNWIND ch.sources AS source
  MATCH (i:Item {uid: source.uid})
  MATCH (s:Session {id: coalesce(source.session, i.session)})
  CREATE (c)-[:CITES {session: s.id}]->(i)
  MERGE (c)-[:LEARNED_IN]->(s)
}
CALL (c) {
  OPTIONAL MATCH (p:Person {org: $org, id: $person})
  OPTIONAL MATCH (svc:Service {org: $org, id: $service})
  OPTIONAL MATCH (job:LearningJob {id: $job})
  WITH coalesce(p, svc, job) AS by
  FOREACH (x IN CASE WHEN by IS NULL THEN [] ELSE [by] END | CREATE (c)-[:MADE_BY]->(x))
}
CALL (c, ch) {
  UNWIND ch.from AS origin
  MATCH (original:Change {id: origin})-[:OF_ENTRY]->(entry:Entry)
  CREATE (c)-[:PROMOTED_FROM]->(original)
  CREATE (c)-[:PROMOTED_FROM]->(entry)
}
RETURN count(c) AS changes
