"""JSON answers, encoded once for REST and GraphQL alike: orjson (several times faster than
the standard library on a nested view), or the standard library where orjson refuses a value
(a lone surrogate, an integer beyond 64 bits), so no answer fails for its encoding."""

from __future__ import annotations

import json
from typing import Any

import orjson
from starlette.responses import JSONResponse


def dumps(body: Any) -> bytes:
    """`body` as compact UTF-8 JSON."""
    try:
        return orjson.dumps(body)
    except (orjson.JSONEncodeError, TypeError):
        return json.dumps(body, ensure_ascii=False, allow_nan=False,
                          separators=(",", ":")).encode("utf-8", "surrogatepass")


class JsonResponse(JSONResponse):
    """Starlette's JSONResponse, rendered by `dumps`."""

    def render(self, content: Any) -> bytes:
        return dumps(content)
