"""Neo4j: the driver, transactions, and the statements in `cypher/`. Nothing else imports neo4j."""
