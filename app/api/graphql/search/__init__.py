"""Full-text search over the entries the caller may read."""
