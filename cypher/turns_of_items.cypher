// Turns by the uid of one of their items (GraphQL's item -> turn).
UNWIND $uids AS uid
MATCH (i:Item {uid: uid})-[:IN_TURN]->(t:Turn)-[:IN_SESSION]->(s:Session)
      -[:OF_AGENT]->(:Agent)-[:IN_ORG]->(:Org {id: $org})
RETURN uid, t {.id, .status, .model, .shown, .at, .completedAt, .head, .revision,
               session: s.id, items: []} AS turn
