// The relationships that start at these nodes (by element id), with their properties.
UNWIND $refs AS ref
MATCH (n)-[r]->(m) WHERE elementId(n) = ref
RETURN ref AS start, type(r) AS type, elementId(m) AS end, properties(r) AS properties
