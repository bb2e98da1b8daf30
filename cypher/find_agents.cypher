UNWIND $ids AS id
// (the plan starts from the index seek on a; the org, unlabelled, is checked on the
// way out and is never where a plan starts: it would expand over all the org's nodes)
MATCH (a:Agent {id: id})-[:IN_ORG]->({id: $org})
USING INDEX a:Agent(id)
RETURN a {.id, .name, .shared, .model, .createdAt} AS agent
