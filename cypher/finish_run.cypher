// A run that applied nothing: it failed (S11: its items stay unprocessed) or had nothing to read.
MATCH (r:Run {id: $run})
SET r.status = $status, r.error = $error, r.finishedAt = $now
RETURN r.id AS id
