// A version in the session's history: on the branch of any head the session ever had
// (an abandoned branch too), so going back or forking may name any of them.
MATCH (s:Session {id: $id})-[:OF_AGENT]->(:Agent)-[:IN_ORG]->(:Org {id: $org})
WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
MATCH (t:Version {id: $version})
WHERE EXISTS { MATCH (s)-[:HEAD]->(:Version)-[:PARENT*0..]->(t) }
   OR EXISTS { MATCH (s)<-[:OF]-(:Version)-[:PARENT*0..]->(t) }
RETURN t {.id, .depth, .items, .cause, .at} AS version
