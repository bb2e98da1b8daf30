// Wait until an index made at start is online (a full-text index made again over existing
// data is populated first), for at most $seconds.
CALL db.awaitIndex($name, $seconds)
