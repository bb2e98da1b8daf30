"""`GET /openapi.json`: OpenAPI 3.1 of every REST route, built from the bodies the handlers
validate with; it matches the routes the app serves."""

from __future__ import annotations

import inspect
import re

import httpx
from starlette.routing import Route

from app.api.rest import routes
from app.domain.enums import (
    AGENT_KINDS,
    JobStatus,
    Kind,
    SessionKind,
    Status,
    TurnStatus,
    Visibility,
)
from app.memory.turns.turns import TURN_STATUSES
from tests.conftest import Api, RunningServer


def served(server: RunningServer) -> set[tuple[str, str]]:
    rest = {route.path for route in routes if isinstance(route, Route)}
    return {
        (method, route.path)
        for route in server.app.routes
        if isinstance(route, Route) and route.path in rest
        for method in route.methods or ()
        if method != "HEAD"
    }


def test_the_document_names_every_route_and_method_and_nothing_else(
    server: RunningServer,
) -> None:
    answer = httpx.get(f"{server.url}/openapi.json")  # public, like the health checks
    assert answer.status_code == 200
    document = answer.json()
    assert document["openapi"] == "3.1.0"
    documented = {
        (method.upper(), path) for path, ops in document["paths"].items() for method in ops
    }
    assert documented == served(server)
    ids = [op["operationId"] for ops in document["paths"].values() for op in ops.values()]
    assert len(ids) == len(set(ids))


def test_each_body_is_the_model_its_handler_validates_with(server: RunningServer) -> None:
    document = httpx.get(f"{server.url}/openapi.json").json()
    for route in routes:
        assert isinstance(route, Route)
        source = inspect.getsource(route.endpoint)
        parsed = re.search(r"bodies\.parse\(request, bodies\.(\w+)", source)
        for method in route.methods or ():
            if method == "HEAD":
                continue
            operation = document["paths"][route.path][method.lower()]
            if parsed is None:
                assert "requestBody" not in operation, (method, route.path)
                continue
            schema = operation["requestBody"]["content"]["application/json"]["schema"]
            assert schema == {"$ref": f"#/components/schemas/{parsed.group(1)}"}, route.path
            assert parsed.group(1) in document["components"]["schemas"]
            assert "400" in operation["responses"], route.path


def test_errors_are_documented_as_the_service_answers_them(
    server: RunningServer, api: Api
) -> None:
    document = httpx.get(f"{server.url}/openapi.json").json()
    create = document["paths"]["/v1/agents"]["post"]
    assert {"201", "400", "401"} <= set(create["responses"])
    schema = document["components"]["schemas"]["CreateAgent"]
    assert "name" in schema["required"]
    # what the document says of a bad body is what the service answers
    response = api.post("/v1/agents", {"shared": True})
    assert response.status_code == 400
    assert set(response.json()) <= set(document["components"]["schemas"]["Error"]["properties"])
    assert response.json()["field"] == "name"
    conflict = document["paths"]["/v1/agents/{id}/memory"]["post"]["responses"]["409"]
    assert "AgentConflict" in conflict["description"]
    assert document["paths"]["/v1/sessions/{id}/turns"]["post"]["parameters"][1]["name"] == "wait"


def test_the_bookmark_header_is_declared_on_every_operation_and_on_every_write(
    server: RunningServer, api: Api
) -> None:
    # Read-your-writes across replicas: every request may send `OpenBot-Bookmark` back, and
    # every answer of an operation that writes may carry one.
    document = httpx.get(f"{server.url}/openapi.json").json()
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            [header] = [p for p in operation["parameters"] if p["in"] == "header"]
            assert (header["name"], header["required"]) == ("OpenBot-Bookmark", False), path
            assert "400" in operation["responses"], (method, path)  # a malformed one
            success = next(a for status, a in operation["responses"].items()
                           if status.startswith("2"))
            assert ("OpenBot-Bookmark" in success.get("headers", {})) == (
                method in ("post", "patch", "delete")), (method, path)
    # what a write answers is a value the declared pattern takes, and the service takes back
    created = api.post("/v1/agents", {"name": "trip planner"})
    bookmark = created.headers["OpenBot-Bookmark"]
    pattern = document["paths"]["/v1/agents/{id}"]["get"]["parameters"][1]["schema"]["pattern"]
    assert re.fullmatch(pattern, bookmark), (pattern, bookmark)
    read = api.get(f"/v1/agents/{created.json()['id']}", headers={"OpenBot-Bookmark": bookmark})
    assert read.status_code == 200, read.text


def test_the_closed_sets_it_names_are_the_domains(server: RunningServer) -> None:
    # The words a client may send and is answered are the domain's sets, declared once
    # (app/domain/enums.py); the request bodies spell the visibility and a turn's status as
    # `Literal` types, which must say the same words.
    schemas = httpx.get(f"{server.url}/openapi.json").json()["components"]["schemas"]

    def words(schema: str, field: str) -> list[str]:
        found: list[str] = schemas[schema]["properties"][field]["enum"]
        return found

    assert words("RecordTurn", "status") == list(TURN_STATUSES)
    assert words("Turn", "status") == list(TurnStatus)
    assert words("AgentRememberBody", "visibility") == list(Visibility)
    assert words("AgentEntry", "visibility") == list(Visibility)
    assert words("RememberBody", "kind") == list(Kind)
    assert words("AgentRememberBody", "kind") == list(AGENT_KINDS)
    assert words("Session", "kind") == list(SessionKind)
    assert words("Entry", "status") == list(Status)
    assert words("Run", "status") == list(JobStatus)


def test_every_answer_a_route_gives_is_declared(server: RunningServer, api: Api) -> None:
    # A generated client knows each answer: a turn's retry with the same item ids is a 200
    # with the turn (201 records it), fork and promote take no body, and any route that reads
    # the graph may find Neo4j gone (503 with Retry-After; /readyz answers it without)
    document = httpx.get(f"{server.url}/openapi.json").json()
    turns = document["paths"]["/v1/sessions/{id}/turns"]["post"]["responses"]
    assert turns["200"]["content"] == turns["201"]["content"]
    assert "OpenBot-Bookmark" in turns["200"]["headers"]
    sid = api.session()["session"]["id"]
    item = {"type": "message", "role": "user", "content": "Hello.", "id": "m-1"}
    assert api.post(f"/v1/sessions/{sid}/turns", {"items": [item]}).status_code == 201
    assert api.post(f"/v1/sessions/{sid}/turns", {"items": [item]}).status_code == 200
    for path in ("/v1/sessions/{id}/fork", "/v1/sessions/{id}/promote"):
        assert document["paths"][path]["post"]["requestBody"]["required"] is False, path
    assert document["paths"]["/v1/sessions/{id}/revert"]["post"]["requestBody"]["required"]
    assert api.http.post(f"/v1/sessions/{sid}/fork").status_code == 201  # no body at all
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            if path in ("/healthz", "/openapi.json"):  # answered without Neo4j
                assert "503" not in operation["responses"], path
                continue
            unavailable = operation["responses"]["503"]
            assert ("Retry-After" in unavailable.get("headers", {})) == (path != "/readyz"), (
                method, path)
