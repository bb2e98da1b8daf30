// Live views: what moved, for every watched session and agent at once (the one statement the
// poll of each process runs while anyone watches). A session's revision, and how many of its
// consolidation runs ended and when the last one did (a run handed back to the queue and
// another ending between two polls leave the count as it was, not the time); an agent's
// memory version. Nothing here is shown to a client: each subscriber reads what changed
// through the reader's own scope.
CALL () {
  UNWIND $sessions AS sid
  MATCH (s:Session {id: sid})
  CALL (s) {
    OPTIONAL MATCH (s)<-[:FOR_SESSION]-(r:Run)
    WHERE NOT r.status IN ['queued', 'running']
    RETURN count(r) AS ended, coalesce(max(r.finishedAt), 0) AS lastEnded
  }
  RETURN collect({id: sid, revision: s.revision, ended: ended, lastEnded: lastEnded})
         AS sessions
}
CALL () {
  UNWIND $agents AS aid
  MATCH (a:Agent {id: aid})
  RETURN collect({id: aid, version: coalesce(a.memoryVersion, 0)}) AS agents
}
RETURN sessions, agents
