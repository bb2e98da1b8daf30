// Live views: what moved, for every watched session and agent at once (the one statement the
// poll of each process runs while anyone watches). A session's revision and its ended
// consolidation runs; an agent's memory version. Nothing here is shown to a client: each
// subscriber reads what changed through the reader's own scope.
CALL () {
  UNWIND $sessions AS sid
  MATCH (s:Session {id: sid})
  RETURN collect({id: sid, revision: s.revision,
                  ended: COUNT { (s)<-[:FOR_SESSION]-(r:Run)
                                 WHERE NOT r.status IN ['queued', 'running'] }}) AS sessions
}
CALL () {
  UNWIND $agents AS aid
  MATCH (a:Agent {id: aid})
  RETURN collect({id: aid, version: coalesce(a.memoryVersion, 0)}) AS agents
}
RETURN sessions, agents
