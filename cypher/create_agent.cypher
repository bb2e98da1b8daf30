MATCH (o:Org {id: $org})
CREATE (a:Agent {id: $agent.id, name: $agent.name, shared: $agent.shared, model: $agent.model,
                 createdAt: $agent.createdAt})-[:IN_ORG]->(o)
RETURN a {.id, .name, .shared, .model, .createdAt} AS agent
