// Deletes up to $batch nodes of one org's record, one kind at a time ($step), the kinds that
// hang from others first, so that every node left is still reached from the org: run again
// after a stop, the same steps find what is left. Answers how many it deleted (0: the step is
// done). The org itself goes last ($step 'org'), with its import marker.
MATCH (o:Org {id: $org})
CALL (o) {
  // the nodes of an import stopped before its relationships, which hang from nothing yet
  WITH o WHERE $step = 'importing'
  MATCH (i:Import {org: $org})
  MATCH (n:Importing) WHERE n.importRef STARTS WITH i.refs AND NOT n:Org
  RETURN n
  UNION
  WITH o WHERE $step = 'dropped'
  MATCH (o)<-[:IN_ORG]-(:Agent)<-[:FOR_AGENT]-(:LearningJob)-[:DROPPED]->(n:DroppedChange)
  RETURN n
  UNION
  WITH o WHERE $step = 'dropped'
  MATCH (o)<-[:IN_ORG]-(:Agent)<-[:OF_AGENT|ERASED_FROM]-(:Session)<-[:FOR_SESSION]-(:Run)
        -[:DROPPED]->(n:DroppedChange)
  RETURN n
  UNION
  WITH o WHERE $step = 'agentChanges'
  MATCH (o)<-[:IN_ORG]-(a:Agent)
  MATCH (n:AgentChange {agent: a.id})
  RETURN n
  UNION
  WITH o WHERE $step = 'agentEntries'
  MATCH (o)<-[:IN_ORG]-(a:Agent)
  MATCH (n:AgentEntry {agent: a.id})
  RETURN n
  UNION
  WITH o WHERE $step = 'learningJobs'
  MATCH (o)<-[:IN_ORG]-(:Agent)<-[:FOR_AGENT]-(n:LearningJob)
  RETURN n
  UNION
  WITH o WHERE $step = 'changes'
  MATCH (o)<-[:IN_ORG]-(:Agent)<-[:OF_AGENT|ERASED_FROM]-(:Session)<-[:IN_SESSION]-(n)
  WHERE n:Change OR n:Turn
  RETURN n
  UNION
  WITH o WHERE $step = 'changes'
  MATCH (o)<-[:IN_ORG]-(:Agent)<-[:OF_AGENT|ERASED_FROM]-(:Session)<-[:FOR_SESSION]-(n:Run)
  RETURN n
  UNION
  WITH o WHERE $step = 'entries'
  MATCH (o)<-[:IN_ORG]-(:Agent)<-[:OF_AGENT|ERASED_FROM]-(:Session)-[:HAS_ENTRY]->(n:Entry)
  RETURN n
  UNION
  WITH o WHERE $step = 'items'
  MATCH (o)<-[:IN_ORG]-(:Agent)<-[:OF_AGENT|ERASED_FROM]-(:Session)<-[:OF]-(:Version)
        -[:ADDS]->(n:Item)
  RETURN n
  UNION
  WITH o WHERE $step = 'versions'
  MATCH (o)<-[:IN_ORG]-(:Agent)<-[:OF_AGENT|ERASED_FROM]-(:Session)<-[:OF]-(n:Version)
  RETURN n
  UNION
  WITH o WHERE $step = 'sessions'
  MATCH (o)<-[:IN_ORG]-(:Agent)<-[:OF_AGENT|ERASED_FROM]-(n:Session)
  RETURN n
  UNION
  WITH o WHERE $step = 'agents'
  MATCH (o)<-[:IN_ORG]-(n)
  WHERE n:Agent OR n:Erasure
  RETURN n
  UNION
  WITH o WHERE $step = 'members'
  MATCH (o)<-[:MEMBER_OF|SERVES]-()<-[:GRANTS]-(n:Token)
  RETURN n
  UNION
  WITH o WHERE $step = 'members'
  MATCH (o)<-[:MEMBER_OF|SERVES]-(n)
  RETURN n
  UNION
  WITH o WHERE $step = 'org'
  OPTIONAL MATCH (n:Import {org: $org})
  WITH n WHERE n IS NOT NULL
  RETURN n
  UNION
  WITH o WHERE $step = 'org'
  RETURN o AS n
}
WITH DISTINCT n LIMIT $batch
DETACH DELETE n
RETURN count(*) AS deleted
