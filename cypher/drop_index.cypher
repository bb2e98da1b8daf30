// An index the schema makes again with other options (apply_schema).
DROP INDEX $name IF EXISTS
