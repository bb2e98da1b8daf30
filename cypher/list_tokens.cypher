// token list: every token of an org, newest first; what it grants, never its hash.
MATCH (t:Token)-[:GRANTS]->(grantee)-[:MEMBER_OF|SERVES]->(:Org {id: $org})
RETURN coalesce(t.id, 'tok-' + left(t.hash, 12)) AS id,
       CASE WHEN grantee:Person THEN 'person' ELSE 'service' END AS kind,
       grantee.id AS name, t.createdAt AS createdAt, t.lastUsedAt AS lastUsedAt,
       t.expiresAt AS expiresAt, t.revokedAt AS revokedAt
ORDER BY t.createdAt DESC, id
