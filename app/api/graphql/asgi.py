"""The ASGI app at `/graphql`: Strawberry behind the same Bearer auth as REST."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL

from app.api.graphql.context import Context
from app.api.graphql.schema import schema
from app.errors import ServiceError
from app.memory import values
from app.memory.service import Service


class GraphQLApp(GraphQL[Context, None]):
    """Strawberry's ASGI app, behind the same Bearer auth as REST (GraphiQL's page is open)."""

    def __init__(self, service: Service) -> None:
        super().__init__(schema, graphql_ide="graphiql", allow_queries_via_get=True)
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            request = Request(scope, receive)
            ide_page = request.method == "GET" and "query" not in request.query_params
            if not ide_page:
                try:
                    scope["state"] = {
                        **scope.get("state", {}),
                        "principal": await self.service.tokens.principal(
                            request.headers.get("authorization")
                        ),
                    }
                except ServiceError as exc:
                    await JSONResponse(exc.body(), status_code=exc.status)(scope, receive, send)
                    return
        await super().__call__(scope, receive, send)

    async def get_context(
        self, request: Request | WebSocket, response: Response | WebSocket
    ) -> Context:
        principal: values.Principal = request.scope["state"]["principal"]
        return Context(service=self.service, who=principal, request=request, response=response)
