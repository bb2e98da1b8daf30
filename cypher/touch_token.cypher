// A token's last use, recorded at most once a minute (`$before`: the oldest use that is
// still fresh), so a busy token costs one small write a minute, not one a request.
MATCH (t:Token {hash: $hash})
WHERE t.lastUsedAt IS NULL OR t.lastUsedAt < $before
SET t.lastUsedAt = $now
