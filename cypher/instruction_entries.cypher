// What the instructions of a turn of session $id can reach (S5, S6, A8, A9), and no more, so
// that what a turn and GET instructions carry back does not grow with the entries (Neo4j still
// orders them all): the session's active entries, and the active agent entries its person
// (`viewer`) may see, each newest first, then by key, without their sources.
// `instructions.compose` applies the rules to what is read.
//
// Each list stops once the contents before an entry hold $reach characters or more: a line of
// the text is longer than its entry's content, so no entry past that point can be reached
// (S6 stops at the first entry that does not fit), whatever the budget's split.
// A cut inside a tie (entries of the same time) is exact only if Neo4j ordered the tie's keys
// as Python does, so the keys of the tie's entries past the cut come too (`sessionTied`,
// `agentTied`): `Reachable.closed` checks them, and when they would come first in Python's
// order, the read is made again with $wholeTies, which keeps the whole tie. (A tie can be
// long: every entry of one learning job or one promote has the same time.) The fold's
// variable is `x`, not the list's own name: reusing `c` or `e` there made Neo4j 5.26 compare
// a tie against the outer variable.
// Agent entries go by their names (`listed_key`: `key`, or `key@person` for a private one; a
// private entry and the shared one of its key are two), so they are ordered by name, as Python
// orders them, and a tie's entries past the cut are named so.
//
// (Its columns differ from `lock_session`'s: a turn runs the two as one statement.)
// Reads are read-committed even within one statement, so the session's revision and the
// agent's memory version are read first and again last (`readRevisionAfter`,
// `agentVersionAfter`); a read whose two differ is read again (`reachable`).
// (the plan starts from the index seek on s; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (s:Session {id: $id})-[:OF_AGENT]->(a:Agent)-[:IN_ORG]->(o {id: $org})
USING INDEX s:Session(id)
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
WITH s, a, o, s.revision AS readRevision, coalesce(a.memoryVersion, 0) AS agentVersion
OPTIONAL MATCH (s)-[:WITH]->(p:Person)
WITH s, a, o, readRevision, agentVersion, coalesce(p.id, '') AS viewer
CALL (s) {
  // (each entry's kept state: see session_views; an entry without a kept change has no status)
  OPTIONAL MATCH (s)-[:HAS_ENTRY]->(e:Entry {status: 'active'})
  WITH e ORDER BY e.updatedAt DESC, e.key
  WITH collect(e) AS newest
  WITH newest, reduce(r = {size: 0, n: 0, at: null}, x IN newest |
    CASE WHEN r.size < $reach OR ($wholeTies AND x.updatedAt = r.at)
         THEN {size: r.size + size(x.content), n: r.n + 1, at: x.updatedAt} ELSE r END) AS cut
  RETURN [e IN newest[..cut.n] | e {.key, .content, .kind, .status, .updatedAt,
                                    .change}] AS sessionNewest,
         [e IN newest[cut.n..] WHERE e.updatedAt = cut.at | e.key] AS sessionTied
}
CALL (a, viewer) {
  OPTIONAL MATCH (a)-[:HAS_MEMORY]->(e:AgentEntry {status: 'active'})
    WHERE e.owner = '' OR e.owner = viewer
  WITH e, CASE e.owner WHEN '' THEN e.key ELSE e.key + '@' + e.owner END AS name
  ORDER BY e.updatedAt DESC, name
  WITH collect(e) AS newest, collect(name) AS names
  WITH newest, names, reduce(r = {size: 0, n: 0, at: null}, x IN newest |
    CASE WHEN r.size < $reach OR ($wholeTies AND x.updatedAt = r.at)
         THEN {size: r.size + size(x.content), n: r.n + 1, at: x.updatedAt} ELSE r END) AS cut
  RETURN [e IN newest[..cut.n] | e {.key, .owner, .content, .kind, .status, .about,
                                    .visibility, .updatedAt, .change}] AS agentNewest,
         [n IN range(cut.n, size(newest) - 1) WHERE newest[n].updatedAt = cut.at | names[n]]
           AS agentTied
}
CALL (s, a) {
  MATCH (again:Session {id: s.id})-[:OF_AGENT]->(same:Agent {id: a.id})
  RETURN again.revision AS readRevisionAfter,
         coalesce(same.memoryVersion, 0) AS agentVersionAfter
}
RETURN viewer, a.shared AS sharedAgent, readRevision, readRevisionAfter, agentVersion,
       agentVersionAfter, sessionNewest, sessionTied, agentNewest, agentTied,
       {useOverride: s.useOverride, generateOverride: s.generateOverride,
        org: o {.memoryUse, .memoryGenerate}} AS reachSwitches
