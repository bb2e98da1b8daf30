// How many nodes the graph holds (Neo4j's count store: no node is read).
MATCH (n)
RETURN count(n) AS nodes
