"""JSON answers of REST and GraphQL, encoded in one place: orjson (several times faster than
the standard library on a nested view), or the standard library where orjson refuses a value
(a lone surrogate, an integer beyond 64 bits), so no answer fails for its encoding."""

from __future__ import annotations

import json
from typing import Any

import orjson
from starlette.responses import JSONResponse


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
