// Consolidation runs and learning jobs queued or running, across every process (the status
// indexes answer it without a scan).
CALL () {
  MATCH (r:Run) WHERE r.status IN ['queued', 'running']
  RETURN 'consolidation' AS kind, r.status AS status, count(*) AS n
  UNION ALL
  MATCH (j:LearningJob) WHERE j.status IN ['queued', 'running']
  RETURN 'learning' AS kind, j.status AS status, count(*) AS n
}
RETURN kind, status, n
