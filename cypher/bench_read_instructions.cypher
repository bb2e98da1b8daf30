// Benchmark floor (bench/run), not used by the service: the least graph work the
// instructions of a session need: its active entries' current state (see bench_memory_edit)
// and the active shared entries of its agent's memory.
MATCH (s:Session {id: $id})-[:OF_AGENT]->(a:Agent)-[:IN_ORG]->(:Org {id: $org})
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
CALL (s) {
  MATCH (s)-[:HAS_ENTRY]->(e:Entry {status: 'active'})
  RETURN collect(e {.key, .content, .kind}) AS entries
}
CALL (a) {
  MATCH (a)-[:HAS_MEMORY]->(ae:AgentEntry {status: 'active', visibility: 'shared'})
  RETURN collect(ae {.key, .content, .kind}) AS agentEntries
}
RETURN entries, agentEntries
