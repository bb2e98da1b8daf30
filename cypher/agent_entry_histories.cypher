// Each agent entry's story, newest change first: the chain of REPLACES from the change that
// made its current state (an entry's changes all share its visibility, so one check serves).
UNWIND $ids AS cid
// (the plan starts from the index seek on c0; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (c0:AgentChange {id: cid})-[:OF_ENTRY]->(e:AgentEntry)<-[:HAS_MEMORY]-(:Agent)
      -[:IN_ORG]->({id: $org})
USING INDEX c0:AgentChange(id)
WHERE $all OR e.owner = '' OR e.owner = $person
MATCH path = (c0)-[:REPLACES*0..]->(c:AgentChange)
WITH cid, c, length(path) AS depth
OPTIONAL MATCH (c)-[:MADE_BY]->(job:LearningJob)
CALL (c) {
  OPTIONAL MATCH (c)-[r:CITES]->(i:Item)
  OPTIONAL MATCH (:Session {id: r.session})-[:WITH]->(p:Person)
  WITH r, i, p ORDER BY r.session, i.seq
  RETURN collect(CASE WHEN i IS NULL THEN null
                      ELSE {session: r.session, item: i.id, uid: i.uid,
                            person: p.id} END) AS sources
}
WITH cid, c, depth, job, sources ORDER BY depth
RETURN cid, collect(c {.id, .version, .op, .maker, .person, .key, .owner, .content, .kind, .status,
                       .about, .visibility, .beforeContent, .beforeStatus, .at,
                       job: job.id, sources: sources}) AS changes
