// Turns by id, with the ids of their items (their items' records: turn_items).
UNWIND $ids AS tid
MATCH (t:Turn {id: tid})-[:IN_SESSION]->(s:Session)-[:OF_AGENT]->(:Agent)-[:IN_ORG]->(:Org {id: $org})
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
CALL (t) {
  OPTIONAL MATCH (i:Item)-[:IN_TURN]->(t)
  WITH i ORDER BY i.seq
  RETURN collect(i.id) AS items
}
RETURN t {.id, .status, .model, .shown, .shownAgent, .at, .completedAt, .head, .revision,
          session: s.id, items: items} AS turn
