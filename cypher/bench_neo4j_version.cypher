// The Neo4j version and edition, printed above the benchmark's table (bench/run).
CALL dbms.components() YIELD name, versions, edition
RETURN name, versions[0] AS version, edition
