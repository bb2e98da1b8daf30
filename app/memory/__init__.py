"""The rules of the specification, as plain Python over the store's records."""
