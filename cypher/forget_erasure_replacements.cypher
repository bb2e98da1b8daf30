// Erasures done before a finished erasure dropped its opaque id (a graph written before): the
// record keeps whom it erased, not what stands for them now. How many.
MATCH (er:Erasure {status: 'done'})
WHERE er.replacement IS NOT NULL
REMOVE er.replacement
RETURN count(er) AS forgotten
