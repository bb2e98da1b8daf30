// Benchmark floor (bench/run), not used by the service: the least graph work the
// instructions of a session need: its active entries' current state (see bench_memory_edit)
// and the active shared entries of its agent's memory.
// (the plan starts from the index seek on s; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (s:Session {id: $id})-[:OF_AGENT]->(a:Agent)-[:IN_ORG]->({id: $org})
USING INDEX s:Session(id)
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
