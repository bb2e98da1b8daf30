"""Authentication, once for every route: a Starlette `AuthenticationMiddleware` backend reads
the Bearer token, and `RequirePrincipal` denies every request that has no principal, except
the few public ones (health, GraphiQL's page, `/metrics`, which checks its own token, and
GraphQL's WebSocket, whose token comes in its first message)."""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import parse_qs

from starlette.authentication import (
    AuthCredentials,
    AuthenticationBackend,
    AuthenticationError,
    BaseUser,
)
from starlette.requests import HTTPConnection
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from app.api.encoding import error_answer
from app.domain.principals import Principal
from app.errors import Unauthorized

# Paths that answer everyone the same, so a token sent with them is not looked at (a health
# probe that carries one stays a health check, also while the database is down); /metrics
# reads its Authorization header as its own token. GraphiQL's page is public too (`is_public`),
# but shares its path with signed GraphQL requests, whose token is looked at.
PUBLIC_PATHS = frozenset({"/healthz", "/readyz", "/openapi.json", "/metrics"})
PUBLIC_PREFIXES = ("/graphql/assets/",)  # GraphiQL's scripts and styles


class PrincipalUser(BaseUser):
    """The request's principal, as Starlette's `request.user`."""

    def __init__(self, principal: Principal) -> None:
        self.principal = principal

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def display_name(self) -> str:
        return self.principal.person or f"service {self.principal.service}"


class BearerTokens(AuthenticationBackend):
    """`Authorization: Bearer <token>` to the principal it grants; a bad token is an error."""

    async def authenticate(self, conn: HTTPConnection) -> tuple[AuthCredentials, BaseUser] | None:
        header = conn.headers.get("authorization")
        if header is None or _answers_everyone(conn.scope["path"]):
            return None
        try:
            principal = await conn.app.state.service.tokens.principal(header)
        except Unauthorized as exc:
            if conn.scope["type"] == "websocket":
                # refused as every socket is, by the 4403 that closes it once accepted, not by
                # an upgrade answered 403 with nothing said (`GraphQLApp.on_ws_connect`)
                return None
            raise AuthenticationError(exc.message) from exc
        return AuthCredentials(["authenticated"]), PrincipalUser(principal)


def _answers_everyone(path: str) -> bool:
    return path in PUBLIC_PATHS or path.startswith(PUBLIC_PREFIXES)


def refused(conn: HTTPConnection, exc: AuthenticationError) -> Response:
    return error_answer(Unauthorized(str(exc)))


def is_public(scope: Scope) -> bool:
    """Health checks, GraphiQL's page (a GET of /graphql without a query) and assets, and the
    WebSocket of /graphql, which signs in with its `connection_init` (`GraphQLApp.on_ws_connect`
    closes it with 4403 without a valid token)."""
    if scope["type"] == "websocket":
        return bool(scope["path"] == "/graphql")
    if scope["type"] != "http":
        return False
    if _answers_everyone(scope["path"]):
        return True
    if scope["path"] != "/graphql" or scope["method"] != "GET":
        return False
    return "query" not in parse_qs(scope.get("query_string", b"").decode("latin-1"))


class RequirePrincipal:
    """Deny by default: a request without a principal is 401 unless the route is public."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        denied = (
            scope["type"] in ("http", "websocket")
            and not is_public(scope)
            and not scope["user"].is_authenticated
        )
        if denied and scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 4401})
            return
        if denied:
            answer = error_answer(Unauthorized("send Authorization: Bearer <token>"))
            await answer(scope, receive, send)
            return
        await self.app(scope, receive, send)


def authorization_in(payload: Mapping[str, object] | None) -> str | None:
    """The `Authorization` of a WebSocket's `connection_init` payload, as GraphQL clients send
    it: `{"Authorization": "Bearer T"}` or `{"headers": {"Authorization": ...}}`, any case."""
    for place in (payload, (payload or {}).get("headers")):
        if not isinstance(place, Mapping):
            continue
        for key, value in place.items():
            if str(key).lower() == "authorization" and isinstance(value, str):
                return value
    return None


def principal_of(conn: HTTPConnection) -> Principal:
    """The principal of a request that passed `RequirePrincipal`."""
    user = conn.user
    if not isinstance(user, PrincipalUser):
        raise Unauthorized("send Authorization: Bearer <token>")
    return user.principal
