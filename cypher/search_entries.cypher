// Full-text search over the entries a reader may see: every match, each with whether its key
// is the query itself. Lucene's score is not read: it weighs a word by how many documents of the
// whole index hold it, every org's and every person's, so it would tell a reader of what others
// hold; the service ranks the matches by what the reader may see alone. Session hits are changes that are the CURRENT change of an entry of a session
// (kept state: the newest change of the key on the branch of the head), in the reader's org
// and, for a person, their own sessions. Agent hits are agent entries (their current state)
// of the org's agents: shared ones and the person's own private ones (a private entry and the
// shared one of its key are two hits); a service token ($person null) sees all. Each source
// names its session's person: the reader's view leaves out those they may not reach.
// The full-text indexes are eventually consistent: first await the refresh of every document
// queued by commits so far, so that a search finds what was written before it.
CALL db.index.fulltext.awaitEventuallyConsistentIndexRefresh()
CALL () {
  CALL db.index.fulltext.queryNodes('change_text', $query) YIELD node
  WITH node AS c
  WHERE ($kinds IS NULL OR c.kind IN $kinds) AND ($status IS NULL OR c.status = $status)
  MATCH (c)<-[:CURRENT]-(:Entry)<-[:HAS_ENTRY]-(s:Session)
        -[:OF_AGENT]->(a:Agent)-[:IN_ORG]->(:Org {id: $org})
  WHERE ($person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) })
    AND ($session IS NULL OR s.id = $session) AND ($agent IS NULL OR a.id = $agent)
  // (the ids of the items it cites: the items of a page's hits are read by change_sources)
  CALL (c) {
    OPTIONAL MATCH (c)-[:CITES]->(i:Item)
    WITH i ORDER BY i.seq
    RETURN collect(i.id) AS sources
  }
  RETURN 'session' AS source, s.id AS session, a.id AS agent,
         c {.key, .content, .kind, .status, updatedAt: c.at, change: c.id,
            sourceIds: sources} AS entry
  UNION ALL
  CALL db.index.fulltext.queryNodes('agent_entry_text', $query) YIELD node
  WITH node AS e
  WHERE $session IS NULL AND ($agent IS NULL OR e.agent = $agent)
    AND ($kinds IS NULL OR e.kind IN $kinds) AND ($status IS NULL OR e.status = $status)
    AND ($person IS NULL OR e.owner = '' OR e.owner = $person)
  MATCH (a:Agent {id: e.agent})-[:HAS_MEMORY]->(e)
  MATCH (a)-[:IN_ORG]->(:Org {id: $org})
  // (the sources each entry keeps: keep_agent_sources, as agent_entries reads them)
  RETURN 'agent' AS source, null AS session, a.id AS agent,
         e {.key, .owner, .content, .kind, .status, .about, .visibility, .updatedAt, .change,
            sources: [n IN range(0, size(coalesce(e.sourceUids, [])) - 1) |
                      {session: e.sourceSessions[n], item: e.sourceItems[n],
                       uid: e.sourceUids[n],
                       person: CASE e.sourcePersons[n] WHEN '' THEN null
                               ELSE e.sourcePersons[n] END}]} AS entry
}
RETURN source, session, agent, entry, toLower(entry.key) = $exact AS exact
