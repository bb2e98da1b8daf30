"""JSON answers of REST and GraphQL, and each error's answer, encoded in one place: orjson
(several times faster than the standard library on a nested view), or the standard library
where orjson refuses a value (a lone surrogate, an integer beyond 64 bits), so no answer fails
for its encoding."""

from __future__ import annotations

import json
from typing import Any

import orjson
from starlette.responses import JSONResponse

from app.errors import ServiceError, Unauthorized, Unavailable


def dumps(body: Any) -> bytes:
    """`body` as compact UTF-8 JSON. What orjson refuses is written with non-ASCII escaped
    (`\\ud800`), so a lone surrogate still makes valid UTF-8 and valid JSON."""
    try:
        return orjson.dumps(body)
    except (orjson.JSONEncodeError, TypeError):
        return json.dumps(body, allow_nan=False, separators=(",", ":")).encode()


class JsonResponse(JSONResponse):
    """Starlette's JSONResponse, rendered by `dumps`."""

    def render(self, content: Any) -> bytes:
        return dumps(content)


# A 401 names the scheme that would be accepted (RFC 9110, 11.6.1): a client, or a library
# that signs in on a challenge, learns to send a Bearer token.
CHALLENGE = 'Bearer realm="openbot-memory"'


def error_answer(exc: ServiceError) -> JsonResponse:
    """A ServiceError's answer: its status and body, and for Unauthorized the scheme to sign
    in with, for Unavailable when to retry."""
    headers: dict[str, str] = {}
    if isinstance(exc, Unauthorized):
        headers["WWW-Authenticate"] = CHALLENGE
    if isinstance(exc, Unavailable):
        headers["Retry-After"] = str(exc.retry_after)
    return JsonResponse(exc.body(), status_code=exc.status, headers=headers or None)
