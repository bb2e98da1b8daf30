// Every node of one org's record, each once: the org, its members and service, its erasures,
// agents and their memory (erased entries and their changes too: they left the memory but stay
// as tombstones), sessions with their versions, items, turns, entries and changes, runs and
// learning jobs with the changes they dropped. Tokens are not part of it: they never leave.
MATCH (o:Org {id: $org})
CALL (o) {
  RETURN o AS n
  UNION
  MATCH (o)<-[:MEMBER_OF|SERVES]-(n) WHERE n:Person OR n:Service RETURN n
  UNION
  MATCH (o)<-[:IN_ORG]-(n) WHERE n:Agent OR n:Erasure RETURN n
  UNION
  MATCH (o)<-[:IN_ORG]-(a:Agent)
  MATCH (n:AgentEntry {agent: a.id})
  RETURN n
  UNION
  MATCH (o)<-[:IN_ORG]-(a:Agent)
  MATCH (n:AgentChange {agent: a.id})
  RETURN n
  UNION
  MATCH (o)<-[:IN_ORG]-(:Agent)<-[:FOR_AGENT]-(n:LearningJob) RETURN n
  UNION
  MATCH (o)<-[:IN_ORG]-(:Agent)<-[:FOR_AGENT]-(:LearningJob)-[:DROPPED]->(n:DroppedChange)
  RETURN n
  UNION
  MATCH (o)<-[:IN_ORG]-(:Agent)<-[:OF_AGENT|ERASED_FROM]-(n:Session) RETURN n
  UNION
  MATCH (o)<-[:IN_ORG]-(:Agent)<-[:OF_AGENT|ERASED_FROM]-(:Session)<-[:OF]-(n:Version) RETURN n
  UNION
  MATCH (o)<-[:IN_ORG]-(:Agent)<-[:OF_AGENT|ERASED_FROM]-(:Session)<-[:OF]-(:Version)-[:ADDS]->(n:Item)
  RETURN n
  UNION
  MATCH (o)<-[:IN_ORG]-(:Agent)<-[:OF_AGENT|ERASED_FROM]-(:Session)<-[:IN_SESSION]-(n)
  WHERE n:Turn OR n:Change
  RETURN n
  UNION
  MATCH (o)<-[:IN_ORG]-(:Agent)<-[:OF_AGENT|ERASED_FROM]-(:Session)-[:HAS_ENTRY]->(n:Entry) RETURN n
  UNION
  MATCH (o)<-[:IN_ORG]-(:Agent)<-[:OF_AGENT|ERASED_FROM]-(:Session)-[:HAS_ENTRY]->(:Entry)<-[:OF_ENTRY]-(n)
  RETURN n
  UNION
  MATCH (o)<-[:IN_ORG]-(:Agent)<-[:OF_AGENT|ERASED_FROM]-(:Session)<-[:FOR_SESSION]-(n:Run) RETURN n
  UNION
  MATCH (o)<-[:IN_ORG]-(:Agent)<-[:OF_AGENT|ERASED_FROM]-(:Session)<-[:FOR_SESSION]-(:Run)
        -[:DROPPED]->(n:DroppedChange)
  RETURN n
}
RETURN elementId(n) AS ref, labels(n) AS labels, properties(n) AS properties
