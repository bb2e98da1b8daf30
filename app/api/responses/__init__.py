"""What REST (and MCP, which answers the same JSON) answers: one typed dict per shape, and the
function beside it that builds it from the domain's values, a module per noun (sessions, turns,
jobs, agents, erasures, search), and here the service's own health.

A shape is a `TypedDict`, so an answer is the plain dict the encoder writes (a 10,000-entry view
is built per request, and nothing on the way out is validated again), while pydantic reads the
same declaration for the response schemas of `/openapi.json`."""

from __future__ import annotations

from typing_extensions import TypedDict


class Health(TypedDict):
    status: str
