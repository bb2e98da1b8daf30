// The current agent entries (state kept on each entry, its sources too: keep_agent_sources;
// never derived from history) that a reader may see: shared ones and $person's private ones, or all with $all (A9), of each
// agent of $agents.
// The version is read first and the agent again last (`versionAfter`): reads are
// read-committed even within one statement, so the repository reads again an agent whose
// version moved while its entries were read (as session_views does for a session).
UNWIND $agents AS aid
// (the plan starts from the index seek on a; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (a:Agent {id: aid})-[:IN_ORG]->({id: $org})
USING INDEX a:Agent(id)
WITH aid, a, coalesce(a.memoryVersion, 0) AS version
OPTIONAL MATCH (a)-[:HAS_MEMORY]->(e:AgentEntry)
  WHERE $all OR e.owner = '' OR e.owner = $person
CALL (e) {
  // (the sources the entry keeps: keep_agent_sources)
  RETURN [n IN range(0, size(coalesce(e.sourceUids, [])) - 1) |
          {session: e.sourceSessions[n], item: e.sourceItems[n], uid: e.sourceUids[n],
           person: CASE e.sourcePersons[n] WHEN '' THEN null
                   ELSE e.sourcePersons[n] END}] AS sources
}
WITH aid, version, a.shared AS shared,
     collect(e {.key, .owner, .content, .kind, .status, .about, .visibility, .updatedAt,
                .change, sources: sources}) AS agentEntries
CALL (aid) {
  MATCH (again:Agent {id: aid})
  RETURN coalesce(again.memoryVersion, 0) AS versionAfter
}
RETURN aid, version, shared, agentEntries, versionAfter
