// token revoke: by the token's hash (the token itself was given) or by its id; a token
// already revoked keeps the time it was first revoked.
MATCH (t:Token)
WHERE t.hash = $hash OR coalesce(t.id, 'tok-' + left(t.hash, 12)) = $id
SET t.revokedAt = coalesce(t.revokedAt, $now)
RETURN coalesce(t.id, 'tok-' + left(t.hash, 12)) AS id
