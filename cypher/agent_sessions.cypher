// A page of each agent's sessions, oldest first.
UNWIND $agents AS aid
MATCH (a:Agent {id: aid})-[:IN_ORG]->(:Org {id: $org})
OPTIONAL MATCH (s:Session)-[:OF_AGENT]->(a)
  WHERE $person IS NULL OR EXISTS { (s)-[:WITH]->(:Person {id: $person}) }
WITH aid, s ORDER BY s.createdAt, s.id
WITH aid, collect(s.id) AS ids
RETURN aid, ids[$offset..$offset + $limit] AS ids
