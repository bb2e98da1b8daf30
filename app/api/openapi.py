"""`GET /openapi.json`: an OpenAPI 3.1 document of every REST route, built from the route table
and the pydantic bodies the handlers validate with (`app/api/bodies.py`). A route without an
entry here fails the document's build (and its test), so the document cannot fall behind."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema
from starlette.routing import BaseRoute, Route

from app.api import bodies
from app.api.auth import PUBLIC_PATHS
from app.api.bodies import INT64_MAX, MAX_PAGE, MAX_WAIT_SECONDS
from app.memory.agents.memory import MAX_LOG_PAGE
from app.memory.views.search import MAX_LIMIT, MAX_QUERY

Param = tuple[str, dict[str, Any], str]  # (name, JSON Schema, description)


@dataclass(frozen=True)
class Doc:
    """What a route does, the body it takes, its success status and its query parameters."""

    summary: str
    body: type[BaseModel] | None = None
    status: int = 200
    query: tuple[Param, ...] = ()
    conflict: str | None = None  # the `_tag` of its 409, if it has one
    also: tuple[tuple[int, str, str], ...] = ()  # other errors: (status, when, `_tag`)
    required: tuple[str, ...] = ()  # query parameters that must be sent


def _int(low: int, high: int = INT64_MAX) -> dict[str, Any]:
    return {"type": "integer", "minimum": low, "maximum": high}


PAGE: tuple[Param, ...] = (
    ("offset", _int(0), "items to skip (default 0)"),
    ("limit", _int(1, MAX_PAGE), f"items to answer, 1 to {MAX_PAGE} (default 50)"))
WAIT: tuple[Param, ...] = (
    ("wait", {"type": "number", "minimum": 0, "maximum": MAX_WAIT_SECONDS},
     f"seconds to wait for the consolidation run to end, 0 to {MAX_WAIT_SECONDS:.0f}"),)
NOT_YOURS = (404, "the agent or parent session is not one you may reach", "NotFound")



DOCS: dict[tuple[str, str], Doc] = {
    ("GET", "/healthz"): Doc("The process answers."),
    ("GET", "/readyz"): Doc("Neo4j answers (503 `Unavailable` when it does not)."),
    ("GET", "/openapi.json"): Doc("This document."),
    ("POST", "/v1/agents"): Doc("Create an agent of your org.", bodies.CreateAgent, 201),
    ("GET", "/v1/agents"): Doc("The agents of your org, oldest first.", query=PAGE),
    ("GET", "/v1/agents/{id}"): Doc("One agent."),
    ("GET", "/v1/agents/{id}/memory"): Doc(
        "The agent's memory as you may see it, and its version (A10)."),
    ("POST", "/v1/agents/{id}/memory"): Doc(
        "Remember or Forget in the agent's memory at the version you last saw (A10).",
        bodies.AgentMemoryCommand, conflict="AgentConflict"),
    ("GET", "/v1/agents/{id}/memory/log"): Doc(
        "Each version of the agent's memory you may see, oldest first (A11).",
        query=(("after", _int(0), "versions after this one (default 0)"),
               ("limit", _int(1, MAX_LOG_PAGE),
                f"versions to answer, 1 to {MAX_LOG_PAGE} (default 50)"))),
    ("GET", "/v1/agents/{id}/learning"): Doc(
        "The agent's learning jobs, newest first: status, model, error, read, kept, dropped."),
    ("POST", "/v1/sessions"): Doc(
        "Start a session; answers its Session view.", bodies.CreateSession, 201,
        also=(NOT_YOURS, (403, "a person names another person", "Forbidden"))),
    ("GET", "/v1/sessions"): Doc(
        "The sessions you may reach, oldest first.",
        query=(*PAGE, ("agent", {"type": "string"}, "only this agent's sessions"))),
    ("GET", "/v1/sessions/{id}"): Doc("The Session view: the session and its memory (S2)."),
    ("GET", "/v1/sessions/{id}/memory"): Doc("The session's memory view (S2)."),
    ("POST", "/v1/sessions/{id}/memory"): Doc(
        "Remember, Forget, Configure or Refresh at the head and revision you last saw (S12-S16).",
        bodies.MemoryCommand, conflict="SessionConflict"),
    ("POST", "/v1/sessions/{id}/turns"): Doc(
        "Record a turn; answers at once, or with `wait` once its consolidation run has ended "
        "(201; 200 for a retry with the same item ids).",
        bodies.RecordTurn, 201, WAIT, conflict="SessionConflict"),
    ("GET", "/v1/sessions/{id}/turns/{turn}"): Doc("One turn of the session."),
    ("POST", "/v1/sessions/{id}/turns/{turn}/complete"): Doc(
        "Complete a turn that awaited an approval.", bodies.CompleteTurn,
        conflict="SessionConflict"),
    ("GET", "/v1/sessions/{id}/instructions"): Doc(
        "The memory text a turn would get now, and the keys included (S5, S6, A8)."),
    ("GET", "/v1/sessions/{id}/runs"): Doc("The session's consolidation runs, newest first."),
    ("GET", "/v1/sessions/{id}/runs/{run}"): Doc(
        "One consolidation run; with `wait`, once it has ended.", query=WAIT),
    ("POST", "/v1/sessions/{id}/fork"): Doc(
        "A new session with this one's history and memory at a version.", bodies.Fork, 201),
    ("POST", "/v1/sessions/{id}/revert"): Doc(
        "History and memory as they were at a version, as a new head.", bodies.Revert,
        conflict="SessionConflict"),
    ("POST", "/v1/sessions/{id}/promote"): Doc(
        "A subagent session's lasting entries become a new agent's memory (A12).",
        bodies.Promote, 201, conflict="SessionConflict"),
    ("GET", "/v1/sessions/{id}/versions"): Doc("Every head the session ever had, oldest first."),
    ("GET", "/v1/sessions/{id}/versions/{version}"): Doc(
        "A version as it was: its memory and a page of its timeline.", query=PAGE),
    ("GET", "/v1/search"): Doc(
        "Full-text search of the session and agent entries you may read, best first.",
        query=(("q", {"type": "string", "minLength": 1, "maxLength": MAX_QUERY, "pattern": r"\S"},
                "the words to find (Lucene syntax)"),
               ("session", {"type": "string"}, "only this session's entries"),
               ("agent", {"type": "string"}, "only this agent's entries"),
               ("limit", _int(1, MAX_LIMIT), "hits to answer (default 20)")),
        required=("q",), also=((404, "the session or agent is not one you may reach",
                                 "NotFound"),)),
    ("GET", "/v1/org/settings"): Doc("Your org's defaults."),
    ("PATCH", "/v1/org/settings"): Doc("Change your org's defaults.", bodies.OrgSettingsPatch),
}

ERROR = {
    "type": "object",
    "required": ["_tag", "message"],
    "properties": {
        "_tag": {"type": "string"},
        "message": {"type": "string"},
        "field": {"type": "string", "description": "the field at fault (ValidationError)"},
        "requestId": {"type": "string", "description": "the answer's X-Request-Id"},
    },
}


BAD_REQUEST = (
    "a bad body or parameter; `field` names it. Besides this document's schemas, a body is "
    "refused that holds a credential (S10), a key with a control or invisible character (S1), "
    "text that is not Unicode (a lone surrogate), a turn with one item id twice, or names an "
    "`about`, `parent` or `to` that is not one you may use")


def _error(description: str, tag: str) -> dict[str, Any]:
    return {
        "description": f"{description} (`{tag}`)",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


def _operation(method: str, path: str, doc: Doc, refs: dict[str, Any]) -> dict[str, Any]:
    params: list[dict[str, Any]] = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
        for name in re.findall(r"{(\w+)}", path)
    ]
    params += [
        {"name": name, "in": "query", "required": name in doc.required, "schema": schema,
         "description": text}
        for name, schema, text in doc.query
    ]
    responses: dict[str, Any] = {
        str(doc.status): {"description": "OK", "content": {"application/json": {
            "schema": {"type": "object"}}}},
    }
    if doc.body is not None or doc.query:
        responses["400"] = _error(BAD_REQUEST, "ValidationError")
    if path not in PUBLIC_PATHS:
        responses["401"] = _error("no token, or one not known", "Unauthorized")
    if "{" in path:
        responses["404"] = _error("no such object you may reach", "NotFound")
    if doc.body is not None:
        responses["413"] = _error("the body is over the size limit, unread", "PayloadTooLarge")
    if doc.conflict:
        responses["409"] = _error("stale, or not allowed in this state", doc.conflict)
    for status, when, tag in doc.also:
        responses[str(status)] = _error(when, tag)
    operation: dict[str, Any] = {
        "operationId": f"{method.lower()}_{re.sub(r'[^a-z0-9]+', '_', path.lower()).strip('_')}",
        "summary": doc.summary,
        "parameters": params,
        "responses": responses,
    }
    if path not in PUBLIC_PATHS:
        operation["security"] = [{"bearer": []}]
    if doc.body is not None:
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": refs[doc.body.__name__]}},
        }
    return operation


def document(routes: Sequence[BaseRoute]) -> dict[str, Any]:
    """The OpenAPI document of `routes`; KeyError names a route that has no `Doc`."""
    models = sorted({d.body for d in DOCS.values() if d.body is not None}, key=lambda m: m.__name__)
    keyed, schemas = models_json_schema(
        [(model, "validation") for model in models],
        ref_template="#/components/schemas/{model}",
        by_alias=True,
    )
    refs = {model.__name__: keyed[(model, "validation")] for model in models}
    paths: dict[str, dict[str, Any]] = {}
    for route in routes:
        if not isinstance(route, Route):
            continue
        for method in sorted(route.methods or ()):
            if method == "HEAD":
                continue
            doc = DOCS[(method, route.path)]
            paths.setdefault(route.path, {})[method.lower()] = _operation(
                method, route.path, doc, refs
            )
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "OpenBot memory service",
            "version": "1",
            "description": "Session and agent memory, with provenance. GraphQL at /graphql.",
        },
        "paths": paths,
        "components": {
            "schemas": {**schemas.get("$defs", {}), "Error": ERROR},
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }
