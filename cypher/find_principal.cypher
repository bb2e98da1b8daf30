// The principal a token acts for: a person of an org, or an org's service (no person).
MATCH (t:Token {hash: $hash})-[:GRANTS]->(grantee)-[:MEMBER_OF|SERVES]->(o:Org)
RETURN o.id AS org,
       CASE WHEN grantee:Person THEN grantee.id END AS person,
       CASE WHEN grantee:Service THEN grantee.id END AS service
