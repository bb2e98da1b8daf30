// Turns by id (their items: turn_items, read only when asked for), as one row: the driver's
// cost is per record (each is a message of its own, read in two socket reads), so 100 turns
// in one list cost about a third of 100 rows.
UNWIND $ids AS tid
MATCH (t:Turn {id: tid})-[:IN_SESSION]->(s:Session)-[:OF_AGENT]->(:Agent)-[:IN_ORG]->(:Org {id: $org})
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
RETURN collect(t {.id, .status, .model, .shown, .shownAgent, .at, .completedAt, .head,
                  .revision, session: s.id}) AS turns
