// The agents of the org whose memory may rest on the items of session $id: those holding an
// entry one change of which cites one of its items (a Forget's retracted change is a change of
// the same entry). The items stay as tombstones, citations and all, so a deletion asked again
// finds the same agents.
MATCH (s:Session {id: $id})-[:OF_AGENT|ERASED_FROM]->(:Agent)-[:IN_ORG]->(o:Org {id: $org})
OPTIONAL MATCH (s)<-[:OF]-(:Version)-[:ADDS]->(:Item)<-[:CITES]-(:AgentChange)
               -[:OF_ENTRY]->(:AgentEntry)<-[:HAS_MEMORY]-(a:Agent)-[:IN_ORG]->(o)
WITH a ORDER BY a.id
RETURN collect(DISTINCT a.id) AS agents
