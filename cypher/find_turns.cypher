// Turns by id (their items: turn_items, read only when asked for), as one row: the driver's
// cost is per record (each is a message of its own, read in two socket reads), so 100 turns
// in one list cost about a third of 100 rows.
UNWIND $ids AS tid
// (the plan starts from the index seek on t; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (t:Turn {id: tid})-[:IN_SESSION]->(s:Session)-[:OF_AGENT]->(:Agent)-[:IN_ORG]->({id: $org})
USING INDEX t:Turn(id)
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
RETURN collect(t {.id, .status, .model, .shown, .shownAgent, .at, .completedAt, .head,
                  .revision, session: s.id}) AS turns
