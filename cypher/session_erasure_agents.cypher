// The agents of the org whose memory may rest on the items of the sessions $ids: those holding
// an entry one change of which cites one of their items (a Forget's retracted change is a
// change of the same entry). The items stay as tombstones, citations and all, so a deletion
// asked again finds the same agents.
MATCH (o:Org {id: $org})
OPTIONAL MATCH (s:Session)-[:OF_AGENT|ERASED_FROM]->(:Agent)-[:IN_ORG]->(o)
WHERE s.id IN $ids
OPTIONAL MATCH (s)<-[:OF]-(:Version)-[:ADDS]->(:Item)<-[:CITES]-(:AgentChange)
               -[:OF_ENTRY]->(:AgentEntry)<-[:HAS_MEMORY]-(a:Agent)-[:IN_ORG]->(o)
WITH a ORDER BY a.id
RETURN collect(DISTINCT a.id) AS agents
