"""Each request, observed once, outermost: its id, its span, its metrics and its log line.

The id is the client's `X-Request-Id` when it is sane (1-128 of `[A-Za-z0-9._:-]`), else a new
one; every answer carries it, and every JSON error body gets it as `requestId`. The log line
holds the id, the org, the route template (never the path's ids or a query), the status and the
duration: never a header, a body, a token or a memory's content. An exception no handler took
is logged here with its traceback and answered as a 500.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from typing import Any

from opentelemetry.trace import SpanKind, Status, StatusCode
from starlette.applications import Starlette
from starlette.datastructures import MutableHeaders
from starlette.requests import ClientDisconnect
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.auth import PrincipalUser
from app.api.encoding import JsonResponse, dumps, error_answer
from app.errors import ServiceError
from app.logs import FIELDS, request_id
from app.telemetry import Telemetry

log = logging.getLogger("openbot_memory.http")

# The header a client may name its request by, and in which every answer names it.
HEADER = "X-Request-Id"
HEADER_KEY = HEADER.lower().encode()  # as ASGI spells a header's name
SANE_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
ERROR_KEY = "openbot.error"  # the `_tag` of the error the request was answered, if any
CLIENT_CLOSED = 499  # the status logged for a request whose client hung up before its answer


def request_id_of(scope: Scope) -> str:
    """The client's id when it is sane, else a new one."""
    for name, value in scope.get("headers", []):
        if name == HEADER_KEY:
            sent = bytes(value).decode("latin-1")
            if SANE_ID.fullmatch(sent):
                return sent
            break
    return uuid.uuid4().hex


def route_of(scope: Scope) -> str:
    """The route template of the request (`/v1/sessions/{id}`), not its path: the route that
    served it, or for a request refused before routing (a bad token, a body too large) the
    route it was sent to; `unmatched` when no route has its path."""
    route = scope.get("route")
    if route is None and isinstance(scope.get("app"), Starlette):
        matches = [(r.matches(scope)[0], r) for r in scope["app"].routes]
        found = [r for match, r in matches if match is Match.FULL] or [
            r for match, r in matches if match is Match.PARTIAL]
        route = found[0] if found else None
    path: object = getattr(route, "path", None)
    return path if isinstance(path, str) else "unmatched"


def org_of(scope: Scope) -> str | None:
    user = scope.get("user")
    return user.principal.org if isinstance(user, PrincipalUser) else None


class RequestTelemetry:
    """The outermost middleware: request id, span, metrics, log line, last-resort 500."""

    def __init__(self, app: ASGIApp, telemetry: Telemetry) -> None:
        self.app = app
        self.telemetry = telemetry

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = request_id_of(scope)
        token = request_id.set(rid)
        method = scope["method"] if scope["method"] in METHODS else "OTHER"
        started = time.perf_counter()
        answer: dict[str, Any] = {"status": 500, "started": False}
        held: list[Message] = []

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                answer["status"] = message["status"]
                answer["started"] = True
                MutableHeaders(scope=message).append(HEADER, rid)
                if message["status"] >= 400 and _is_json(message):
                    held.append(message)  # its body gets `requestId` before it goes out
                    return
            elif message["type"] == "http.response.body" and held:
                held.append(message)
                if message.get("more_body", False):
                    return
                for out in _with_request_id(scope, held, rid):
                    await send(out)
                held.clear()
                return
            await send(message)

        tracer = self.telemetry.tracer
        with tracer.start_as_current_span(
            f"{method} request", kind=SpanKind.SERVER, record_exception=False,
            attributes={"http.request.method": method, "openbot.request_id": rid},
        ) as span:
            try:
                await self.app(scope, receive, send_with_id)
            except ServiceError as exc:
                # An expected error raised outside the handlers (authentication looks the token
                # up in Neo4j, which may be down): answered as itself, one log line.
                scope[ERROR_KEY] = exc.tag
                if answer["started"]:
                    raise
                await error_answer(exc)(scope, receive, send_with_id)
            except ClientDisconnect:
                # the client hung up while sending its body: no one to answer, and no fault of
                # the service's (nginx's 499 names it)
                answer["status"] = CLIENT_CLOSED
                scope[ERROR_KEY] = "ClientDisconnect"
            except Exception:
                log.exception(
                    "unexpected error on %s %s", method, route_of(scope),
                    extra={FIELDS: {"requestId": rid, "route": route_of(scope)}},
                )
                span.set_status(Status(StatusCode.ERROR, "unexpected error"))
                if not answer["started"]:
                    await internal_error_answer()(scope, receive, send_with_id)
            finally:
                route = route_of(scope)
                status = int(answer["status"])
                seconds = time.perf_counter() - started
                span.update_name(f"{method} {route}")
                span.set_attribute("http.route", route)
                span.set_attribute("http.response.status_code", status)
                metrics = self.telemetry.metrics
                metrics.http_requests.labels(route, method, str(status)).inc()
                metrics.http_seconds.labels(route, method).observe(seconds)
                self._log_line(scope, rid, method, route, status, seconds)
                request_id.reset(token)

    @staticmethod
    def _log_line(
        scope: Scope, rid: str, method: str, route: str, status: int, seconds: float
    ) -> None:
        fields: dict[str, Any] = {
            "requestId": rid, "org": org_of(scope), "method": method, "route": route,
            "status": status, "durationMs": round(seconds * 1000, 1),
        }
        if ERROR_KEY in scope:
            fields["error"] = scope[ERROR_KEY]
        # 503: Neo4j is down, which the metrics and the driver's own warnings already tell
        level = logging.INFO if status < 500 else logging.ERROR
        if status == 503:
            level = logging.WARNING
        log.log(level, "%s %s %s", method, route, status, extra={FIELDS: fields})


def _is_json(message: Message) -> bool:
    for name, value in message.get("headers", []):
        if name.lower() == b"content-type":
            return bool(value.startswith(b"application/json"))
    return False


def _with_request_id(scope: Scope, held: list[Message], rid: str) -> list[Message]:
    """A JSON error answer with `requestId` in its body (and its length fixed); its `_tag` is
    the request's error, unless a handler named one."""
    start, bodies = held[0], held[1:]
    raw = b"".join(message.get("body", b"") for message in bodies)
    try:
        body = json.loads(raw)
    except ValueError:
        return held
    if not isinstance(body, dict):
        return held
    if isinstance(body.get("_tag"), str) and body["_tag"] != "InternalError":
        scope.setdefault(ERROR_KEY, body["_tag"])  # an expected error, whoever answered it
    out = dumps({**body, "requestId": rid})
    headers = MutableHeaders(scope=start)
    headers["content-length"] = str(len(out))
    return [start, {"type": "http.response.body", "body": out, "more_body": False}]


def internal_error_answer() -> JsonResponse:
    """The answer to an error the service did not expect, which tells nothing of it."""
    return JsonResponse({"_tag": "InternalError", "message": "internal error"}, status_code=500)
