"""The ASGI app at `/graphql`: Strawberry, behind the app's authentication middleware."""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL

from app.api.auth import principal_of
from app.api.graphql.context import Context
from app.api.graphql.schema import schema
from app.memory import values
from app.memory.service import Service

PLAYGROUND = Path(__file__).resolve().parents[1] / "playground"


class GraphQLApp(GraphQL[Context, None]):
    """Strawberry's ASGI app; `RequirePrincipal` lets only GraphiQL's page through unsigned."""

    def __init__(self, service: Service) -> None:
        super().__init__(schema, graphql_ide="graphiql", allow_queries_via_get=True)
        self.service = service

    async def render_graphql_ide(self, request: Request) -> Response:
        """GraphiQL with its assets served from `/graphql/assets/` (no CDN) and a token field."""
        return HTMLResponse((PLAYGROUND / "index.html").read_text())

    async def get_context(
        self, request: Request | WebSocket, response: Response | WebSocket
    ) -> Context:
        # Without a principal only GraphiQL's page gets here, and it runs no operation: the
        # org-less principal it is given reaches nothing.
        who = principal_of(request) if request.user.is_authenticated else values.Principal("")
        return Context(service=self.service, who=who, request=request, response=response)
