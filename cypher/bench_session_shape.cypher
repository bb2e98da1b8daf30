// Benchmark tests only (tests/test_bench.py): the shape of a session's graph, node by node:
// its labels, property names and outgoing edges (type and the label they lead to), over the
// session, its versions, their items and turns, and the changes, entries and runs.
MATCH (s:Session {id: $id})
OPTIONAL MATCH (s)<-[:OF]-(v:Version)
OPTIONAL MATCH (v)-[:ADDS]->(i:Item)
OPTIONAL MATCH (i)-[:IN_TURN]->(t:Turn)
OPTIONAL MATCH (s)<-[:IN_SESSION]-(c:Change)
OPTIONAL MATCH (s)-[:HAS_ENTRY]->(e:Entry)
OPTIONAL MATCH (s)<-[:FOR_SESSION]-(r:Run)
WITH s, collect(DISTINCT v) + collect(DISTINCT i) + collect(DISTINCT t)
     + collect(DISTINCT c) + collect(DISTINCT e) + collect(DISTINCT r) AS nodes
UNWIND [s] + nodes AS n
RETURN labels(n) AS labels, keys(n) AS keys, [(n)-[r]->(m) | type(r) + '>' + labels(m)[0]] AS out
