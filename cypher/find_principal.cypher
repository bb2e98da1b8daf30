MATCH (:Token {hash: $hash})-[:GRANTS]->(p:Person)-[:MEMBER_OF]->(o:Org)
RETURN o.id AS org, p.id AS person
