// The principal a token acts for: a person of an org, or an org's service (no person); with
// the token's id, and whether it was revoked, has expired, or was used lately.
MATCH (t:Token {hash: $hash})-[:GRANTS]->(grantee)-[:MEMBER_OF|SERVES]->(o:Org)
RETURN o.id AS org,
       CASE WHEN grantee:Person THEN grantee.id END AS person,
       CASE WHEN grantee:Service THEN grantee.id END AS service,
       coalesce(t.id, 'tok-' + left(t.hash, 12)) AS id,
       t.revokedAt IS NOT NULL AS revoked,
       t.expiresAt IS NOT NULL AND t.expiresAt <= $now AS expired, t.expiresAt AS expiresAt,
       t.lastUsedAt AS lastUsedAt
