// Turns by id (their items: turn_items, read only when asked for).
UNWIND $ids AS tid
MATCH (t:Turn {id: tid})-[:IN_SESSION]->(s:Session)-[:OF_AGENT]->(:Agent)-[:IN_ORG]->(:Org {id: $org})
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
RETURN t {.id, .status, .model, .shown, .shownAgent, .at, .completedAt, .head, .revision,
          session: s.id} AS turn
