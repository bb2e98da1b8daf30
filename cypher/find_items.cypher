// Items by uid, each only if the caller may reach the session whose version added it.
UNWIND $uids AS uid
MATCH (i:Item {uid: uid})<-[:ADDS]-(:Version)-[:OF]->(s:Session)
      -[:OF_AGENT]->(:Agent)-[:IN_ORG]->(:Org {id: $org})
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
RETURN i {.uid, .id, .type, .role, .content, .app, .author, .at, .seq} AS item
