// What an erasure of person $person goes through, one part at a time: the person's sessions
// (forks and subagent sessions of theirs included: each is with the person), and the org's
// agents (each may hold entries about the person or learned from their items).
MATCH (o:Org {id: $org})
CALL (o) {
  OPTIONAL MATCH (:Person {org: $org, id: $person})<-[:WITH]-(s:Session)
  RETURN collect(s.id) AS sessions
}
CALL (o) {
  OPTIONAL MATCH (a:Agent)-[:IN_ORG]->(o)
  RETURN collect(a.id) AS agents
}
RETURN sessions, agents
