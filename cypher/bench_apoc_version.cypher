// Whether the local Neo4j loaded the APOC plugin (OPENBOT_MEMORY_NEO4J_APOC; bench/run's
// @neo4j/graphql peer needs it): its version.
RETURN apoc.version() AS version
