"""The ASGI application: REST, GraphQL, health, and JSON errors everywhere."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from opentelemetry.trace import TracerProvider
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles

from app.api import warmup
from app.api.auth import BearerTokens, RequirePrincipal, refused
from app.api.bookmarks import Bookmarks
from app.api.encoding import JsonResponse, error_answer
from app.api.graphql import GraphQLApp
from app.api.graphql.asgi import PLAYGROUND
from app.api.limits import BodyLimit
from app.api.mcp import McpEndpoint
from app.api.metrics import metrics
from app.api.rest import routes
from app.api.telemetry import (
    ERROR_KEY,
    RequestTelemetry,
    internal_error_answer,
    route_of,
)
from app.config import Settings
from app.errors import AgentConflict, ServiceError, SessionConflict, http_tag
from app.memory.service import Service
from app.store.database import Database, Target, resolve_target
from app.telemetry import Telemetry, tracer_provider_from_environment

log = logging.getLogger("openbot_memory")


async def service_error(request: Request, exc: Exception) -> Response:
    """An expected error: its body, and its tag on the request's one log line."""
    assert isinstance(exc, ServiceError)
    request.scope[ERROR_KEY] = exc.tag
    if isinstance(exc, SessionConflict | AgentConflict):
        telemetry: Telemetry = request.app.state.telemetry
        telemetry.metrics.conflicts.labels(route_of(request.scope), exc.tag).inc()
    return error_answer(exc)


def allowed_methods(request: Request) -> str | None:
    """The `Allow` of the router's 405: every method the routes on the request's path serve.
    Each REST operation is a route of one method, and the router names only the methods of
    the first route on the path. None for a 405 the router did not answer."""
    route = request.scope.get("route")
    if not isinstance(route, Route) or not route.methods or request.method in route.methods:
        return None
    methods = set(route.methods)
    for other in request.scope["router"].routes:
        if isinstance(other, Route) and other.methods:
            match, _ = other.matches(request.scope)
            if match is not Match.NONE:
                methods |= other.methods
    return ", ".join(sorted(methods))


async def http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    tag = http_tag(exc.status_code)
    message = "no such route" if exc.status_code == 404 else str(exc.detail)
    headers = exc.headers
    allow = allowed_methods(request) if exc.status_code == 405 else None
    if allow is not None:
        headers = {**(headers or {}), "Allow": allow}
    return JsonResponse(
        {"_tag": tag, "message": message}, status_code=exc.status_code, headers=headers
    )


async def unexpected_error(request: Request, exc: Exception) -> Response:
    log.exception("unexpected error on %s %s", request.method, route_of(request.scope))
    return internal_error_answer()


class ServiceProxy:
    """Lets the GraphQL app be built before the lifespan has made the service."""

    def __init__(self) -> None:
        self.target: Service | None = None

    def __getattr__(self, name: str) -> object:
        if self.target is None:
            raise RuntimeError("the service has not started")
        return getattr(self.target, name)


def tune_collector(threshold: int) -> None:
    """Once started: what is alive now (modules, the schema, the service) lives as long as the
    process, so it is frozen out of the collector's passes, and young objects are collected
    every `threshold` allocations (the older generations keep Python's ratios). 0: untouched."""
    if threshold <= 0:
        return
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(threshold, middle, old)


def create_app(
    settings: Settings | None = None,
    target: Target | None = None,
    tracer_provider: TracerProvider | None = None,
) -> Starlette:
    """The service as an ASGI app. Connects to Neo4j (or starts the local one) at startup, then
    serves at once, and warms up (app/api/warmup.py): `/readyz` answers 503 until it is warm.
    Traces go to `tracer_provider`, else where the `OTEL_*` environment says, else nowhere."""
    settings = settings or Settings.from_environment()
    proxy = ServiceProxy()
    own_provider = None if tracer_provider else tracer_provider_from_environment()
    telemetry = Telemetry.with_provider(tracer_provider or own_provider)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        db = await Database.connect(target or resolve_target(settings))
        db.telemetry = telemetry
        service = Service.build(settings, db)
        warming: asyncio.Task[None] | None = None
        try:
            await service.start()
            proxy.target = service
            app.state.service = service
            tune_collector(settings.gc_threshold)
            if settings.warmup:
                warming = asyncio.create_task(warm(settings, service, app.state.ready))
            else:
                app.state.ready.set()
            async with mcp.running():
                yield
        finally:
            if warming is not None:
                warming.cancel()
                await asyncio.gather(warming, return_exceptions=True)
            await service.stop()
            await db.close()
            if own_provider is not None:
                own_provider.shutdown()

    mcp = McpEndpoint(proxy, settings.max_body_bytes)  # type: ignore[arg-type]
    app = build(settings, proxy, telemetry, [mcp.route()], lifespan)
    app.state.ready = asyncio.Event()  # set once warm (see `/readyz`)
    return app


def build(
    settings: Settings,
    proxy: ServiceProxy,
    telemetry: Telemetry,
    more: list[BaseRoute],
    lifespan: Callable[[Starlette], AbstractAsyncContextManager[None]] | None,
) -> Starlette:
    """The app's routes, middleware and error handlers, serving `proxy`'s service."""
    graphql = GraphQLApp(proxy)  # type: ignore[arg-type]
    app = Starlette(
        routes=[
            *routes,
            Route("/metrics", metrics, methods=["GET"]),
            Route("/graphql", graphql),
            WebSocketRoute("/graphql", graphql),  # subscriptions (graphql-transport-ws)
            Mount("/graphql/assets", StaticFiles(directory=PLAYGROUND), name="playground"),
            *more,
        ],
        lifespan=lifespan,
        middleware=[
            Middleware(RequestTelemetry, telemetry=telemetry),
            Middleware(Bookmarks),  # before authentication, whose reads it chains too
            Middleware(BodyLimit, max_bytes=settings.max_body_bytes),
            Middleware(AuthenticationMiddleware, backend=BearerTokens(), on_error=refused),
            Middleware(RequirePrincipal),
        ],
        exception_handlers={
            ServiceError: service_error,
            HTTPException: http_error,
            Exception: unexpected_error,
        },
    )
    app.state.telemetry = telemetry
    return app


async def warm(settings: Settings, service: Service, ready: asyncio.Event) -> None:
    """Warm up, then say ready; a warm-up that fails is logged, and the service is ready
    all the same (cold, as it would be without one)."""
    try:
        await warmup.warm_up(settings, service, rehearsal_app(settings))
    except Exception:
        log.exception("the warm-up failed; the service is ready, cold")
    ready.set()


def rehearsal_app(settings: Settings) -> Callable[[Service], Starlette]:
    """An app like the served one, without lifespan or MCP, serving `service` (the warm-up
    rehearses requests through it), with telemetry of its own (its requests are not the
    clients')."""

    def make(service: Service) -> Starlette:
        proxy = ServiceProxy()
        proxy.target = service
        app = build(settings, proxy, Telemetry(), [], None)
        app.state.service = service
        return app

    return make
