"""Transport: REST and GraphQL over Starlette. Parsing, auth, and mapping to transport types."""
