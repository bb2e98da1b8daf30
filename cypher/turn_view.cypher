// (the plan starts from the index seek on s; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (t:Turn {id: $turn})-[:IN_SESSION]->(s:Session {id: $id})
      -[:OF_AGENT]->(:Agent)-[:IN_ORG]->({id: $org})
USING INDEX s:Session(id)
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
CALL (t) {
  OPTIONAL MATCH (i:Item)-[:IN_TURN]->(t)
  WITH i ORDER BY i.seq
  RETURN collect(i.id) AS items, collect(i.type) AS types,
         collect(coalesce(i.app, '')) AS apps
}
RETURN t {.id, .status, .model, .shown, .shownAgent, .at, .completedAt, .head, .revision,
          session: s.id, items: items, types: types, apps: apps} AS turn
