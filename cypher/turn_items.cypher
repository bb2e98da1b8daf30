// The items of turns by id, in their order: read only when a turn's items are asked for.
UNWIND $ids AS tid
// (the plan starts from the index seek on t; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (t:Turn {id: tid})-[:IN_SESSION]->(s:Session)-[:OF_AGENT]->(:Agent)-[:IN_ORG]->({id: $org})
USING INDEX t:Turn(id)
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
CALL (t) {
  OPTIONAL MATCH (i:Item)-[:IN_TURN]->(t)
  WITH i ORDER BY i.seq
  RETURN collect(i {.uid, .id, .type, .role, .content, .app, .author, .at, .seq, turn: t.id})
           AS records
}
RETURN t.id AS id, records
