"""The ASGI app at `/graphql`: Strawberry, behind the app's authentication middleware.

GraphQL over WebSocket (`graphql-transport-ws`, subscriptions): the socket is let through
unsigned, and signs in with the Bearer token of its `connection_init` payload (or of the
upgrade request's `Authorization` header); without a valid one it is closed with 4403.

GraphQL over HTTP: a client that accepts `application/graphql-response+json` gets that media
type, and a request that fails before execution (it does not parse, does not validate, or its
variables do not coerce) is then a 400 whose body has no `data` entry. A client that accepts
only `application/json` gets 200 with `"data": null`, as GraphQL over HTTP lets it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from datetime import timedelta
from pathlib import Path
from typing import Any

from cross_web import AsyncHTTPRequestAdapter, HTTPException
from graphql import GraphQLError, OperationType, get_operation_ast
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState
from strawberry.asgi import ASGIWebSocketAdapter, GraphQL
from strawberry.exceptions import ConnectionRejectionError, MissingQueryError
from strawberry.http import GraphQLHTTPResponse, GraphQLRequestData
from strawberry.http.exceptions import NonJsonMessageReceived, NonTextMessageReceived
from strawberry.http.types import QueryParams
from strawberry.schema.exceptions import CannotGetOperationTypeError, InvalidOperationTypeError
from strawberry.subscriptions import GRAPHQL_TRANSPORT_WS_PROTOCOL
from strawberry.types import ExecutionResult
from strawberry.types.unset import UnsetType

from app.api.auth import authorization_in, principal_of
from app.api.bodies import load_json
from app.api.encoding import JsonResponse, dumps
from app.api.graphql.context import Context, settings_of
from app.api.graphql.limits import parsed
from app.api.graphql.schema import schema
from app.domain.principals import Principal
from app.errors import Unauthorized, ValidationError, http_tag
from app.memory.service import Service

PLAYGROUND = Path(__file__).resolve().parents[1] / "playground"
GRAPHQL_RESPONSE = "application/graphql-response+json"
OVER_HTTP = (
    "subscriptions are served over WebSocket (graphql-transport-ws) at /graphql, "
    "not over plain HTTP"
)


class SubscriptionOverHttp(HTTPException):
    """A subscription sent as a plain HTTP request (400, on `query`)."""

    def __init__(self) -> None:
        super().__init__(400, OVER_HTTP)


def asks_subscription(data: GraphQLRequestData, max_tokens: int) -> bool:
    """Whether the operation the request runs is a subscription (parsed only when the text
    names one, with the token limit; a text that does not parse is left to the schema's own
    answer)."""
    if not isinstance(data.query, str) or "subscription" not in data.query:
        return False
    try:
        operation = get_operation_ast(parsed(data.query, max_tokens), data.operation_name)
    except GraphQLError:
        return False
    return operation is not None and operation.operation == OperationType.SUBSCRIPTION


def refused_part(exc: HTTPException) -> str:
    """The part of a request Strawberry refused before running it: the operation name that
    names no operation, the query that is missing, else the body."""
    if isinstance(exc.__cause__, CannotGetOperationTypeError):
        return "operationName"
    if isinstance(exc.__cause__, MissingQueryError):
        return "query"
    return "body"


class SubResponse(Response):
    """Strawberry's per-request response parts, plus the media type the answer will have."""

    media: str = "application/json"


def request_error(result: ExecutionResult) -> bool:
    """Whether the operation failed before it ran: no data, and no error names a field path."""
    return result.data is None and bool(result.errors) and all(
        error.path is None for error in result.errors or ()
    )


class SocketFrames(ASGIWebSocketAdapter):
    """Strawberry's WebSocket adapter, reading each frame as a body is read (`load_json`): a
    frame that is no JSON, or that a body could not be (a key said twice, NaN), closes the
    socket with 4400, as Strawberry closes it for a frame its own parser refuses."""

    async def iter_json(
        self, *, ignore_parsing_errors: bool = False
    ) -> AsyncGenerator[object, None]:
        try:
            while self.ws.application_state != WebSocketState.DISCONNECTED:
                try:
                    text = await self.ws.receive_text()
                    yield self.view.decode_json(text)
                except ValidationError as exc:
                    if not ignore_parsing_errors:
                        raise NonJsonMessageReceived from exc
        except KeyError as exc:  # a binary frame
            raise NonTextMessageReceived from exc
        except WebSocketDisconnect:
            pass


class GraphQLApp(GraphQL[Context, None]):
    """Strawberry's ASGI app; `RequirePrincipal` lets only GraphiQL's page through unsigned,
    and the WebSocket, which signs in with its first message (`on_ws_connect`)."""

    websocket_adapter_class = SocketFrames

    def __init__(self, service: Service) -> None:
        super().__init__(
            schema,
            graphql_ide="graphiql",
            allow_queries_via_get=True,
            subscription_protocols=(GRAPHQL_TRANSPORT_WS_PROTOCOL,),
            connection_init_wait_timeout=timedelta(seconds=10),
        )
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Strawberry's app, with its HTTP refusals as JSON `_tag` bodies: a mutation sent
        with GET is 405 `MethodNotAllowed` (GET runs queries only), others 400."""
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        try:
            response = await self.run(Request(scope=scope, receive=receive))
        except SubscriptionOverHttp as exc:
            body = {"_tag": "ValidationError", "field": "query", "message": exc.reason}
            response = JsonResponse(body, status_code=exc.status_code)
        except HTTPException as exc:
            if isinstance(exc.__cause__, InvalidOperationTypeError) and scope["method"] == "GET":
                body = {"_tag": "MethodNotAllowed",
                        "message": "GET runs queries only: send mutations with POST"}
                response = JsonResponse(body, status_code=405, headers={"Allow": "POST"})
            else:
                tag = http_tag(exc.status_code)
                body = {"_tag": tag, "message": exc.reason}
                if tag == "ValidationError":
                    body["field"] = refused_part(exc)
                response = JsonResponse(body, status_code=exc.status_code)
        await response(scope, receive, send)

    async def execute_single(
        self,
        request: Request,
        request_adapter: AsyncHTTPRequestAdapter,
        sub_response: Response,
        context: Context,
        root_value: None,
        request_data: GraphQLRequestData,
    ) -> ExecutionResult:
        """One operation of a plain HTTP request: a subscription is refused (Strawberry would
        run it once as a query, and answer null); it streams over the WebSocket. Answered, the
        context lets go of what the operation read (`Context.release`)."""
        if asks_subscription(request_data, settings_of(context).graphql_max_tokens):
            raise SubscriptionOverHttp
        try:
            return await super().execute_single(
                request, request_adapter, sub_response, context, root_value, request_data
            )
        finally:
            context.release()

    def encode_json(self, data: object) -> str:
        # A str, not bytes: the WebSocket transport sends what this answers as a text frame,
        # which graphql-ws clients require (bytes would go as a binary frame).
        return dumps(data).decode()

    def decode_json(self, data: str | bytes) -> object:
        """A body or `variables` as JSON, with the REST bodies' depth limit (400 on `body`)."""
        return load_json(data)

    def parse_query_params(self, params: QueryParams) -> dict[str, Any]:
        """A GET's parameters; `variables` or `extensions` that is no JSON is a 400 on that
        parameter (a GET has no body to name)."""
        found: dict[str, Any] = dict(params)
        for name in ("variables", "extensions"):
            if found.get(name):
                try:
                    found[name] = self.decode_json(found[name])
                except ValidationError as exc:
                    raise ValidationError(str(exc).replace("the body", name), name) from exc
        return found

    async def render_graphql_ide(self, request: Request) -> Response:
        """GraphiQL with its assets served from `/graphql/assets/` (no CDN) and a token field."""
        return HTMLResponse((PLAYGROUND / "index.html").read_text())

    async def get_sub_response(self, request: Request | WebSocket) -> Response:
        sub = SubResponse()
        sub.status_code = None  # type: ignore[assignment]  # Strawberry's "not set"
        del sub.headers["content-length"]  # the answer sets its own
        request.scope["openbot.sub_response"] = sub
        return sub

    async def process_result(
        self, request: Request, result: ExecutionResult
    ) -> GraphQLHTTPResponse:
        answer = await super().process_result(request, result)
        sub = request.scope.get("openbot.sub_response")
        if isinstance(sub, SubResponse) and GRAPHQL_RESPONSE in request.headers.get("accept", ""):
            sub.media = GRAPHQL_RESPONSE
            if request_error(result):
                sub.status_code = 400
                answer.pop("data", None)
        return answer

    def create_response(
        self,
        response_data: GraphQLHTTPResponse | list[GraphQLHTTPResponse],
        sub_response: Response,
    ) -> Response:
        response = super().create_response(response_data, sub_response)
        if isinstance(sub_response, SubResponse):
            response.headers["content-type"] = sub_response.media
        return response

    async def on_ws_connect(self, context: Context) -> UnsetType | dict[str, object] | None:
        """`connection_init`: sign in with its token, unless the upgrade request's header did;
        without a valid token (in either) the socket closes with 4403 (Forbidden)."""
        if context.request.user.is_authenticated:
            return UnsetType()  # connection_ack without a payload
        authorization = authorization_in(context.connection_params) or (
            context.request.headers.get("authorization")
        )
        try:
            who = await self.service.tokens.principal(authorization)
        except Unauthorized as exc:
            raise ConnectionRejectionError(exc.body()) from exc
        context.renew(who, authorization)
        return UnsetType()

    async def get_context(
        self, request: Request | WebSocket, response: Response | WebSocket
    ) -> Context:
        # Without a principal only GraphiQL's page gets here, and it runs no operation, or a
        # WebSocket, which runs none before `on_ws_connect` signed it in: the org-less
        # principal they are given reaches nothing.
        who = principal_of(request) if request.user.is_authenticated else Principal("")
        # (a WebSocket signed in on its upgrade request is checked again before each
        # operation and event)
        signed_in = isinstance(request, WebSocket) and request.user.is_authenticated
        return Context(service=self.service, who=who, request=request, response=response,
                       authorization=request.headers.get("authorization") if signed_in else None)
