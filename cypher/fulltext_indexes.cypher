// The full-text indexes as the database has them, with their indexConfig (apply_schema makes
// again one whose indexConfig differs from cypher/schema.cypher's).
SHOW FULLTEXT INDEXES YIELD name, options
RETURN name, options.indexConfig AS config
