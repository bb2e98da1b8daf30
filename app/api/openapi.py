"""`GET /openapi.json`: an OpenAPI 3.1 document of every REST route, built from what each route
declares beside its handler (`Operations`): the pydantic body it validates with
(`app/api/bodies.py`), the shape it answers (`app/api/responses/`), its status and query
parameters. A route is served only through its declaration, so the document cannot fall
behind."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, TypeAdapter
from pydantic.json_schema import JsonSchemaMode
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route
from typing_extensions import TypedDict, Unpack

from app.api.auth import PUBLIC_PATHS
from app.api.bodies import INT64_MAX, MAX_WAIT_SECONDS
from app.api.bookmarks import BOOKMARK, HEADER, MAX_BOOKMARKS
from app.memory.paging import DEFAULT_PAGE, MAX_OFFSET, MAX_PAGE

Param = tuple[str, dict[str, Any], str]  # (name, JSON Schema, description)
Endpoint = Callable[[Request], Awaitable[Response]]


@dataclass(frozen=True)
class Doc:
    """What a route does, the body it takes, what it answers (a type pydantic reads: a
    `TypedDict` of app/api/responses/), its success status and its query parameters."""

    summary: str
    answer: Any
    body: type[BaseModel] | None = None
    status: int = 200
    query: tuple[Param, ...] = ()
    conflict: str | None = None  # the `_tag` of its 409, if it has one
    also: tuple[tuple[int, str, str], ...] = ()  # other errors: (status, when, `_tag`)
    required: tuple[str, ...] = ()  # query parameters that must be sent
    # Path parameters its answer gives the routes under its path (OpenAPI links): (name, JSON
    # pointer into the answer, or a runtime expression), e.g. `POST /v1/agents` gives `{id}`
    # at `/id`.
    gives: tuple[tuple[str, str], ...] = ()
    # Paths beside those under its own path whose parameters its answer gives all of, e.g.
    # `POST .../turns` gives the run of `GET .../runs/{run}` (`?wait`'s answer has it).
    reaches: tuple[str, ...] = ()
    # Body fields of other operations that its answer gives: (method and path, field, JSON
    # pointer into the answer), e.g. `POST /v1/agents` gives `POST /v1/sessions` its `agent`.
    feeds: tuple[tuple[str, str, str], ...] = ()
    # Another success status it answers with the same answer, and when: (status, when).
    also_ok: tuple[tuple[int, str], ...] = ()
    body_optional: bool = False  # an empty body is read as `{}`


class Options(TypedDict, total=False):
    """A `Doc`'s fields beyond its summary and answer, as the `Operations` decorators take them."""

    body: type[BaseModel] | None
    status: int
    query: tuple[Param, ...]
    conflict: str | None
    also: tuple[tuple[int, str, str], ...]
    required: tuple[str, ...]
    gives: tuple[tuple[str, str], ...]
    reaches: tuple[str, ...]
    feeds: tuple[tuple[str, str, str], ...]
    also_ok: tuple[tuple[int, str], ...]
    body_optional: bool


class Operation(Route):
    """A route of one method, with its `Doc`."""

    def __init__(self, method: str, path: str, endpoint: Endpoint, doc: Doc) -> None:
        super().__init__(path, endpoint, methods=[method])
        self.method = method
        self.doc = doc


class Operations:
    """The REST routes, each declared by a decorator on its handler (`@operations.get(...)`)."""

    def __init__(self) -> None:
        self.routes: list[BaseRoute] = []

    def _declare(self, method: str, path: str, doc: Doc) -> Callable[[Endpoint], Endpoint]:
        def declare(endpoint: Endpoint) -> Endpoint:
            self.routes.append(Operation(method, path, endpoint, doc))
            return endpoint

        return declare

    def get(
        self, path: str, summary: str, answer: Any, **doc: Unpack[Options]
    ) -> Callable[[Endpoint], Endpoint]:
        return self._declare("GET", path, Doc(summary, answer, **doc))

    def post(
        self, path: str, summary: str, answer: Any, **doc: Unpack[Options]
    ) -> Callable[[Endpoint], Endpoint]:
        return self._declare("POST", path, Doc(summary, answer, **doc))

    def patch(
        self, path: str, summary: str, answer: Any, **doc: Unpack[Options]
    ) -> Callable[[Endpoint], Endpoint]:
        return self._declare("PATCH", path, Doc(summary, answer, **doc))

    def delete(
        self, path: str, summary: str, answer: Any, **doc: Unpack[Options]
    ) -> Callable[[Endpoint], Endpoint]:
        return self._declare("DELETE", path, Doc(summary, answer, **doc))


def integer(low: int, high: int = INT64_MAX) -> dict[str, Any]:
    return {"type": "integer", "minimum": low, "maximum": high}


PAGE: tuple[Param, ...] = (
    ("offset", integer(0, MAX_OFFSET), "items to skip (default 0)"),
    ("limit", integer(1, MAX_PAGE),
     f"items to answer, 1 to {MAX_PAGE} (default {DEFAULT_PAGE})"))
WAIT: tuple[Param, ...] = (
    ("wait", {"type": "number", "minimum": 0, "maximum": MAX_WAIT_SECONDS},
     f"seconds to wait for the consolidation run to end, 0 to {MAX_WAIT_SECONDS:.0f}"),)
NOT_YOURS = (404, "the agent or parent session is not one you may reach", "NotFound")


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
    "a key or `about` a write names that is an erasure's (`erased-` and its random id), "
    "content with a control character other than tab and newline, "
    "text that is not Unicode (a lone surrogate), a turn with one item id twice, or names an "
    "`about` that is not one you may use, a subagent session without a `parent`, a search "
    "query that is not Lucene syntax, or an `OpenBot-Bookmark` that is not one the service "
    "gave")


# The `OpenBot-Bookmark` header (app/api/bookmarks.py): every request may send one back, and an
# answer that wrote carries its own.
BOOKMARK_TEXT = (
    "the bookmarks of writes this client saw (comma-separated, at most "
    f"{MAX_BOOKMARKS}): the request reads at least their state, on any replica")
BOOKMARK_PARAM = {
    "name": HEADER, "in": "header", "required": False, "description": BOOKMARK_TEXT,
    "schema": {"type": "string",
               "pattern": f"^{BOOKMARK.pattern}(,{BOOKMARK.pattern}){{0,{MAX_BOOKMARKS - 1}}}$"},
}
BOOKMARK_ANSWER = {
    HEADER: {"description": "the bookmark of this answer's write (on an answer that wrote): "
                            "send it back to read at least that state",
             "schema": {"type": "string"}},
}
WRITES = frozenset({"POST", "PATCH", "DELETE"})
UNAVAILABLE = "Neo4j does not answer: retry after the `Retry-After` seconds"
WITHOUT_NEO4J = frozenset({"/healthz", "/openapi.json"})  # answered from the process alone
RETRY_AFTER = {"Retry-After": {"description": "seconds to wait before a retry",
                               "schema": {"type": "integer"}}}
CHALLENGED = {"WWW-Authenticate": {"description": "the scheme to sign in with: Bearer",
                                   "schema": {"type": "string"}}}


def _error(description: str, tag: str) -> dict[str, Any]:
    return {
        "description": f"{description} (`{tag}`)",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


def _operation(
    method: str, path: str, doc: Doc, bodies: dict[Any, Any], answers: dict[Any, Any]
) -> dict[str, Any]:
    params: list[dict[str, Any]] = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
        for name in re.findall(r"{(\w+)}", path)
    ]
    params += [
        {"name": name, "in": "query", "required": name in doc.required, "schema": schema,
         "description": text}
        for name, schema, text in doc.query
    ]
    params.append(BOOKMARK_PARAM)
    responses: dict[str, Any] = {
        str(status): {"description": when, "content": {"application/json": {
            "schema": answers[doc.answer]}}}
        for status, when in ((doc.status, "OK"), *doc.also_ok)
    }
    if method in WRITES:
        for status, _ in ((doc.status, "OK"), *doc.also_ok):
            responses[str(status)]["headers"] = BOOKMARK_ANSWER
    responses["400"] = _error(BAD_REQUEST, "ValidationError")  # every request takes a header
    if path not in PUBLIC_PATHS:
        responses["401"] = {**_error("no token, or one not known", "Unauthorized"),
                            "headers": CHALLENGED}
    if "{" in path:
        responses["404"] = _error("no such object you may reach", "NotFound")
    if doc.body is not None:
        responses["413"] = _error("the body is over the size limit, unread", "PayloadTooLarge")
    if doc.conflict:
        responses["409"] = _error("stale, or not allowed in this state", doc.conflict)
    if path not in WITHOUT_NEO4J:
        responses["503"] = {**_error(UNAVAILABLE, "Unavailable"), "headers": RETRY_AFTER}
    for status, when, tag in doc.also:
        responses[str(status)] = _error(when, tag)
    operation: dict[str, Any] = {
        "operationId": _operation_id(method, path),
        "summary": doc.summary,
        "parameters": params,
        "responses": responses,
    }
    if path not in PUBLIC_PATHS:
        operation["security"] = [{"bearer": []}]
    if doc.body is not None:
        operation["requestBody"] = {
            "required": not doc.body_optional,
            "content": {"application/json": {"schema": bodies[doc.body]}},
        }
    return operation


def _operation_id(method: str, path: str) -> str:
    return f"{method.lower()}_{re.sub(r'[^a-z0-9]+', '_', path.lower()).strip('_')}"


def _expression(pointer: str) -> str:
    """A runtime expression: as given, or the answer's body at a JSON pointer."""
    return pointer if pointer.startswith("$") else f"$response.body#{pointer}"


def _links(creator: Operation, operations: Sequence[Operation]) -> dict[str, Any]:
    """OpenAPI links from `creator`'s answer to each operation under its path (or in
    `Doc.reaches`) whose path parameters its answer gives all of (`Doc.gives`), and to each
    operation whose body fields it gives (`Doc.feeds`): a client, or a fuzzer, follows them to
    the objects it made."""
    given = dict(creator.doc.gives)
    fed: dict[str, dict[str, str]] = {}
    for target_route, name, pointer in creator.doc.feeds:
        fed.setdefault(target_route, {})[name] = _expression(pointer)
    links: dict[str, Any] = {}
    for target in operations:
        names = re.findall(r"{(\w+)}", target.path)
        under = target.path.startswith(creator.path + "/{") or target.path in creator.doc.reaches
        body = fed.get(f"{target.method} {target.path}")
        if given and under and set(names) <= set(given):
            link: dict[str, Any] = {
                "operationId": _operation_id(target.method, target.path),
                "parameters": {name: _expression(given[name]) for name in names},
            }
        elif body and not names:
            link = {"operationId": _operation_id(target.method, target.path)}
        else:
            continue
        if body:
            link["requestBody"] = body
        links[_operation_id(target.method, target.path)] = link
    return links


def document(routes: Sequence[BaseRoute]) -> dict[str, Any]:
    """The OpenAPI document of `routes`, each an `Operation`; TypeError names one that is not."""
    operations: list[Operation] = []
    for route in routes:
        if not isinstance(route, Operation):
            raise TypeError(f"{route!r} is served without a declaration (`Operations`)")
        operations.append(route)
    docs = [operation.doc for operation in operations]
    types: set[tuple[Any, JsonSchemaMode]] = {
        (d.body, "validation") for d in docs if d.body is not None
    }
    types |= {(d.answer, "serialization") for d in docs}
    keyed, schemas = TypeAdapter.json_schemas(
        [(key, mode, TypeAdapter(key)) for key, mode in sorted(types, key=repr)],
        ref_template="#/components/schemas/{model}", by_alias=True,
    )
    bodies = {key: schema for (key, mode), schema in keyed.items() if mode == "validation"}
    answers = {key: schema for (key, mode), schema in keyed.items() if mode == "serialization"}
    paths: dict[str, dict[str, Any]] = {}
    for operation in operations:
        paths.setdefault(operation.path, {})[operation.method.lower()] = _operation(
            operation.method, operation.path, operation.doc, bodies, answers
        )
    for operation in operations:
        links = _links(operation, operations)
        if links:
            answer = paths[operation.path][operation.method.lower()]["responses"]
            answer[str(operation.doc.status)]["links"] = links
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
