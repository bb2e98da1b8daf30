// A version in the session's history: on the branch of any head the session ever had
// (an abandoned branch too), so going back or forking may name any of them.
// (the plan starts from the index seek on s; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (s:Session {id: $id})-[:OF_AGENT]->(:Agent)-[:IN_ORG]->({id: $org})
USING INDEX s:Session(id)
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
MATCH (t:Version {id: $version})
WHERE EXISTS { MATCH (s)-[:HEAD]->(:Version)-[:PARENT*0..]->(t) }
   OR EXISTS { MATCH (s)<-[:OF]-(:Version)-[:PARENT*0..]->(t) }
RETURN t {.id, .depth, .items, .cause, .at} AS version
