MATCH (p:Person {org: $org, id: $person})
RETURN p.id AS person
