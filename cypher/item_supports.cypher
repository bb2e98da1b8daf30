// Every session and agent entry change that cites each item, across forks (a fork's copies
// cite the same items), newest first; only those the reader may see, and no erased one.
UNWIND $uids AS uid
// (each org unlabelled: the plans go from the item to it, never from the org over its nodes)
MATCH (i:Item {uid: uid})
USING INDEX i:Item(uid)
CALL (i) {
  OPTIONAL MATCH (i)<-[:CITES]-(c:Change)-[:OF_ENTRY]->(e:Entry)<-[:HAS_ENTRY]-(s:Session)
                 -[:OF_AGENT]->(:Agent)-[:IN_ORG]->({id: $org})
  WHERE ($person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) })
    AND NOT coalesce(c.erased, false)
  WITH c, s ORDER BY c.at DESC, c.id
  RETURN collect(CASE WHEN c IS NULL THEN null ELSE
    {session: s.id, key: c.key, change: c.id, op: c.op, content: c.content, kind: c.kind,
     status: c.status, at: c.at} END) AS sessionEntries
}
CALL (i) {
  OPTIONAL MATCH (i)<-[:CITES]-(c:AgentChange)-[:OF_ENTRY]->(e:AgentEntry)<-[:HAS_MEMORY]-(a:Agent)
                 -[:IN_ORG]->({id: $org})
  WHERE $person IS NULL OR e.owner = '' OR e.owner = $person
  WITH DISTINCT c, a ORDER BY c.at DESC, c.id
  RETURN collect(CASE WHEN c IS NULL THEN null ELSE
    {agent: a.id, key: c.key, change: c.id, op: c.op, content: c.content, kind: c.kind,
     status: c.status, at: c.at, version: c.version, visibility: c.visibility,
     owner: c.owner} END)
    AS agentEntries
}
RETURN uid, sessionEntries, agentEntries
