"""GraphQL at `/graphql`: every view of SPEC section 5, nested, one statement per level.

Loaders batch each level of a nested read into one statement (sessions, agents, items,
entry histories), so a request costs a bounded number of round trips whatever it nests.
"""

from __future__ import annotations

from app.api.graphql.asgi import GraphQLApp
from app.api.graphql.schema import export_schema, schema

__all__ = ["GraphQLApp", "export_schema", "schema"]
