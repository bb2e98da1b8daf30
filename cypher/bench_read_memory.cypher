// Benchmark floor (bench/run), not used by the service: the least graph work a read of a
// session's memory needs when each entry keeps its current state (see bench_memory_edit):
// the session, its head, and each entry's kept state with the ids of the items it cites, all
// on the entry (as the service keeps them): one pass over the session's entries.
// (the plan starts from the index seek on s; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (s:Session {id: $id})-[:OF_AGENT]->(:Agent)-[:IN_ORG]->({id: $org})
USING INDEX s:Session(id)
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
MATCH (s)-[:HEAD]->(h:Version)
CALL (s) {
  MATCH (s)-[:HAS_ENTRY]->(e:Entry)
  WHERE e.change IS NOT NULL
  RETURN collect(e {.key, .content, .kind, .status, .updatedAt, .change, .sources}) AS entries
}
RETURN s {.id, .kind, .revision, .model, .createdAt, head: h.id} AS session, entries
