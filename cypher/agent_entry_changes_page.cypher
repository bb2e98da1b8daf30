// A page of each agent entry's story, newest change first: following REPLACES from the entry's
// current change (or, with $after, from the last change the previous page showed, which is then
// left out), at most $first + 1 changes (an entry's changes all share its visibility, so one
// check serves). 201 is the largest page (MAX_PAGE) + 1: the walk never goes further.
// An $after that is no change of the entry's story (another list's cursor) answers null.
UNWIND $ids AS cid
// (the plan starts from the index seek on c0; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (c0:AgentChange {id: coalesce($after, cid)})-[:OF_ENTRY]->(e:AgentEntry)<-[:HAS_MEMORY]-(:Agent)
      -[:IN_ORG]->({id: $org})
USING INDEX c0:AgentChange(id)
WHERE $all OR e.owner = '' OR e.owner = $person
CALL (c0) {
  MATCH path = (c0)-[:REPLACES*0..201]->(c:AgentChange)
  WHERE $after IS NULL OR length(path) > 0
  WITH c, length(path) AS depth ORDER BY depth LIMIT $first + 1
  OPTIONAL MATCH (c)-[:MADE_BY]->(job:LearningJob)
  CALL (c) {
    OPTIONAL MATCH (c)-[r:CITES]->(i:Item)
    OPTIONAL MATCH (:Session {id: r.session})-[:WITH]->(p:Person)
    WITH r, i, p ORDER BY r.session, i.seq
    RETURN collect(CASE WHEN i IS NULL THEN null
                        ELSE {session: r.session, item: i.id, uid: i.uid,
                              person: p.id} END) AS sources
  }
  WITH c, depth, job, sources ORDER BY depth
  RETURN collect(c {.id, .version, .op, .maker, .person, .key, .owner, .content, .kind, .status,
                    .about, .visibility, .beforeContent, .beforeStatus, .at,
                    job: job.id, sources: sources}) AS changes
}
RETURN cid, CASE WHEN $after IS NULL
                      OR EXISTS { MATCH (:AgentChange {id: cid})-[:REPLACES*0..]->(c0) }
                 THEN changes END AS changes
