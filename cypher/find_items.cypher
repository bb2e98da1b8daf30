// Items by uid, each only if the caller may reach the session whose version added it.
UNWIND $uids AS uid
// (the plan starts from the index seek on i; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (i:Item {uid: uid})<-[:ADDS]-(:Version)-[:OF]->(s:Session)
      -[:OF_AGENT]->(:Agent)-[:IN_ORG]->({id: $org})
USING INDEX i:Item(uid)
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
RETURN i {.uid, .id, .type, .role, .content, .app, .author, .at, .seq} AS item
