"""`GET /metrics`: Prometheus text, for loopback scrapes only unless a metrics token is set.

It checks its own credential (never a service or person token), so `auth` lets it through;
the pending-job gauges are read from the graph at scrape time, so every process shows the
whole queue.
"""

from __future__ import annotations

import hmac
import logging

from prometheus_client import CONTENT_TYPE_LATEST
from starlette.requests import Request
from starlette.responses import Response

from app.api.encoding import error_answer
from app.errors import Forbidden, Unauthorized
from app.memory.access.tokens import bearer, token_hash
from app.memory.jobs.runner import pending_jobs
from app.memory.service import Service
from app.store.database import uncounted

log = logging.getLogger("openbot_memory.metrics")

LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})


def _loopback(host: str | None) -> bool:
    if host is None:
        return False
    host = host.removeprefix("::ffff:")
    return host in LOOPBACK or host.startswith("127.")


def refusal(request: Request, token: str | None) -> Response | None:
    """Why this scrape is refused, as the answer to give; None when it may scrape."""
    if token is not None:
        sent = bearer(request.headers.get("authorization")) or ""
        if hmac.compare_digest(token_hash(sent), token_hash(token)):
            return None
        return error_answer(Unauthorized("send Authorization: Bearer <metrics token>"))
    if _loopback(request.client.host if request.client else None):
        return None
    return error_answer(
        Forbidden("metrics answer loopback clients only, unless OPENBOT_MEMORY_METRICS_TOKEN")
    )


async def metrics(request: Request) -> Response:
    service: Service = request.app.state.service
    secret = service.settings.metrics_token
    refused = refusal(request, secret.get_secret_value() if secret else None)
    if refused is not None:
        return refused
    telemetry = service.db.telemetry
    telemetry.metrics.request_statements.set(service.db.statements)
    try:
        with uncounted():  # a scrape is not a client's request: the gauge above stays exact
            pending = await pending_jobs(service.db)
        telemetry.metrics.set_jobs(pending)
    except Exception:  # the rest of the scrape is still worth having
        log.warning("could not read the pending jobs from Neo4j")
    return Response(telemetry.metrics.text(), media_type=CONTENT_TYPE_LATEST)
