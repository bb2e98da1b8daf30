"""Request ids, the log lines of requests and errors (with a planted secret), and traces."""

from __future__ import annotations

import json
import logging
import re
import socket
import time
from typing import Any

import httpx
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from app.logs import JsonLines, PlainText
from app.store.catalog import CYPHER_DIR, files_of
from app.store.database import Target
from tests.conftest import (
    Api,
    RunningServer,
    assistant,
    claims_nothing,
    make_token,
    user,
)
from tests.openai_stub import OpenAIStub, Reply, changes
from tests.tracing import finished_spans, traced

SECRET = "planted-fact-8841 lives behind the blue door"
ITEM_SECRET = "planted-item-5527 is what the user said"
BAD_TOKEN = "obm_planted_bad_token_0042"
__all__ = ["traced"]  # the fixture, found here by pytest


def lines_of(records: list[logging.LogRecord]) -> list[str]:
    """Every record as both formatters write it."""
    return [f.format(r) for r in records for f in (JsonLines(), PlainText())]


def test_every_answer_carries_a_request_id(api: Api) -> None:
    sane = "client-42:retry.1_A"
    answer = api.get("/v1/agents", headers={"X-Request-Id": sane})
    assert answer.status_code == 200
    assert answer.headers["x-request-id"] == sane
    for bad in ("has spaces", "x" * 129, "semi;colon", ""):
        answer = api.get("/v1/agents", headers={"X-Request-Id": bad})
        assert re.fullmatch(r"[0-9a-f]{32}", answer.headers["x-request-id"]), bad
    first, second = api.get("/healthz"), api.get("/healthz")
    assert first.headers["x-request-id"] != second.headers["x-request-id"]


def test_error_bodies_carry_the_request_id(api: Api, server: RunningServer) -> None:
    missing = api.get("/v1/sessions/nope", headers={"X-Request-Id": "rid-404"})
    assert missing.status_code == 404
    assert missing.json() == {"_tag": "NotFound", "message": missing.json()["message"],
                              "requestId": "rid-404"}
    unsigned = httpx.get(f"{server.url}/v1/agents", headers={"X-Request-Id": "rid-401"})
    assert unsigned.status_code == 401
    assert unsigned.json()["requestId"] == "rid-401"
    assert unsigned.json()["_tag"] == "Unauthorized"
    bad = httpx.get(f"{server.url}/v1/agents", headers={"Authorization": f"Bearer {BAD_TOKEN}"})
    assert bad.status_code == 401
    assert bad.json()["requestId"] == bad.headers["x-request-id"]
    session = api.session()
    stale = api.post(
        f"/v1/sessions/{session['session']['id']}/memory",
        {"expected": "v-stale", "revision": 0,
         "command": {"_tag": "Forget", "key": "k"}},
    )
    assert stale.status_code == 409
    assert stale.json()["requestId"] == stale.headers["x-request-id"]
    no_route = api.get("/v1/nowhere")
    assert no_route.status_code == 404
    assert no_route.json()["requestId"] == no_route.headers["x-request-id"]


def logged(caplog: pytest.LogCaptureFixture, *request_ids: str) -> None:
    """Wait until each request's access line (the one with its status) is logged: it is
    written as the answer ends, so a client can be a moment ahead of it."""
    deadline = time.monotonic() + 20
    while True:
        lines = [getattr(r, "fields", {}) for r in caplog.records]
        seen = {line.get("requestId") for line in lines if "status" in line}
        missing = set(request_ids) - seen
        if not missing:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"no log line for {sorted(missing)}")
        time.sleep(0.05)


def test_logs_hold_no_token_no_content_no_item_text(
    api: Api, server: RunningServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    session = api.session()["session"]["id"]
    api.remember(session, "planted", SECRET)
    api.turn(session, user(ITEM_SECRET), assistant("Noted."))
    api.wait_idle(session)
    refused = httpx.get(f"{server.url}/v1/agents", headers={
        "Authorization": f"Bearer {BAD_TOKEN}", "X-Request-Id": "rid-refused"})
    assert refused.status_code == 401
    answer = api.get(f"/v1/sessions/{session}/memory", headers={"X-Request-Id": "rid-read"})
    assert SECRET in answer.text
    logged(caplog, "rid-refused", "rid-read")
    lines = lines_of(caplog.records)
    assert lines
    for line in lines:
        assert SECRET not in line
        assert "planted-fact" not in line
        assert ITEM_SECRET not in line
        assert "planted-item" not in line
        assert BAD_TOKEN not in line
        assert api.token not in line
    read = [json.loads(JsonLines().format(r)) for r in caplog.records
            if getattr(r, "fields", {}).get("requestId") == "rid-read"]
    assert len(read) == 1
    assert read[0]["org"] == "acme"
    assert read[0]["route"] == "/v1/sessions/{id}/memory"
    assert read[0]["method"] == "GET"
    assert read[0]["status"] == 200
    assert isinstance(read[0]["durationMs"], float)
    assert read[0]["logger"] == "openbot_memory.http"


def test_a_model_failure_and_an_unexpected_error_log_no_text_and_no_id_of_the_path(
    api: Api, server: RunningServer, caplog: pytest.LogCaptureFixture,
    openai_stub: OpenAIStub, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a model's error may quote what it read: the run keeps it (SPEC 7 erases it there), and
    # the log line names the error's class only; an unexpected error's line names the route,
    # not the path's ids
    caplog.set_level(logging.INFO)
    api.patch("/v1/org/settings", {"model": "openai:stub"})
    session = api.session()["session"]["id"]
    openai_stub.script_for("memory_changes", Reply(content=f"refused: {ITEM_SECRET}",
                                                   status=400))
    api.turn(session, user(ITEM_SECRET))
    [run] = api.wait_idle(session)
    assert run["status"] == "failed"
    assert ITEM_SECRET in run["error"]

    async def broken(*args: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr(server.service.sessions, "view", broken)
    crashed = api.get(f"/v1/sessions/{session}", headers={"X-Request-Id": "rid-crash-id"})
    assert crashed.status_code == 500
    logged(caplog, "rid-crash-id")
    # (the service's lines: this test's own HTTP client logs its requests' URLs)
    lines = lines_of([r for r in caplog.records if r.name.startswith("openbot_memory")])
    failed = [line for line in lines if "model openai:stub failed" in line]
    assert failed
    assert all("failed: BadRequestError" in line for line in failed), failed
    for line in lines:
        assert ITEM_SECRET not in line
        assert session not in line
    assert any("unexpected error on GET /v1/sessions/{id}" in line for line in lines)


def test_an_expected_error_is_one_line_an_unexpected_one_its_traceback(
    api: Api, server: RunningServer, caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    caplog.set_level(logging.INFO)
    session = api.session()["session"]["id"]
    api.post(f"/v1/sessions/{session}/memory",
             {"expected": "v-stale", "revision": 0, "command": {"_tag": "Forget", "key": "k"}},
             headers={"X-Request-Id": "rid-conflict"})

    async def broken(*args: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr(server.service.agents, "page", broken)
    crashed = api.get("/v1/agents", headers={"X-Request-Id": "rid-crash"})
    assert crashed.status_code == 500
    assert crashed.json() == {"_tag": "InternalError", "message": "internal error",
                              "requestId": "rid-crash"}
    assert "a bug" not in crashed.text

    def of(rid: str) -> list[logging.LogRecord]:
        return [r for r in caplog.records if getattr(r, "fields", {}).get("requestId") == rid]

    logged(caplog, "rid-conflict", "rid-crash")
    conflict = of("rid-conflict")
    assert len(conflict) == 1
    assert conflict[0].exc_info is None
    assert json.loads(JsonLines().format(conflict[0]))["error"] == "SessionConflict"
    crash = of("rid-crash")
    tracebacks = [r for r in crash if r.exc_info]
    assert len(tracebacks) == 1
    line = JsonLines().format(tracebacks[0])
    assert "\n" not in line
    parsed = json.loads(line)
    assert parsed["requestId"] == "rid-crash"
    assert "RuntimeError: a bug" in parsed["exception"]
    assert [json.loads(JsonLines().format(r))["status"] for r in crash if not r.exc_info] == [500]


def test_json_lines_are_one_object_per_line() -> None:
    try:
        raise ValueError("boom\nwith a newline")
    except ValueError:
        import sys

        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "two\nlines %s", ("a",),
                                   sys.exc_info())
    record.fields = {"requestId": "r1", "route": "/v1/agents"}
    line = JsonLines().format(record)
    assert "\n" not in line
    assert json.loads(line)["message"] == "two\nlines a"
    assert json.loads(line)["route"] == "/v1/agents"
    assert PlainText().format(record).splitlines()[0].endswith("route=/v1/agents")
    assert "[r1]" in PlainText().format(record)


def test_traces_have_a_span_per_request_statement_and_model_call(
    traced: tuple[RunningServer, InMemorySpanExporter], neo4j_target: Target,
    openai_stub: OpenAIStub, server: RunningServer,
) -> None:
    shared, (server, exporter) = server, traced
    api = Api(server.url, make_token(neo4j_target, "acme", "ana"))
    with claims_nothing(shared):  # the job runs here, where the spans are recorded
        agent = api.agent(model="openai:gpt-test")["id"]
        session = api.session(agent)["session"]["id"]
        openai_stub.script_for("memory_changes", changes(
            {"op": "remember", "key": "k", "content": SECRET, "kind": "fact", "sources": ["i-01"]}
        ))
        api.turn(session, user(ITEM_SECRET), assistant("Noted."))
        api.wait_idle(session)
        spans = finished_spans(exporter, "POST /v1/sessions/{id}/turns", "consolidation job")
    api.http.close()
    files = {path.stem for path in CYPHER_DIR.glob("*.cypher")}

    turn = [s for s in spans if s.name == "POST /v1/sessions/{id}/turns"]
    assert len(turn) == 1
    assert turn[0].kind is SpanKind.SERVER
    assert turn[0].attributes is not None
    assert turn[0].attributes["http.response.status_code"] == 201
    children = [s for s in spans if s.parent and s.parent.span_id == turn[0].context.span_id]
    assert children
    # each span names the file of its statement, or the files run together as one statement
    assert all(set(files_of(s.name)) <= files and s.kind is SpanKind.CLIENT for s in children)
    # (the token was looked up by the requests before, and its lookup is cached for seconds)
    # A turn is two statements: the lock with what its instructions can reach (the
    # newest entries of the session and of its agent, no sources), then the record
    assert [s.name for s in sorted(children, key=lambda s: s.start_time or 0)] == [
        "lock_session+instruction_entries", "record_turn"
    ]

    model = [s for s in spans if s.name == "model openai:gpt-test"]
    assert len(model) == 1
    attributes = model[0].attributes or {}
    assert attributes["gen_ai.request.model"] == "openai:gpt-test"
    assert attributes["gen_ai.usage.input_tokens"] == 1
    assert attributes["gen_ai.usage.output_tokens"] == 1
    job = [s for s in spans if model[0].parent and s.context.span_id == model[0].parent.span_id]
    assert [s.name for s in job] == ["consolidation job"]

    for span in spans:  # no parameter value, no content, no token in any span
        text = json.dumps({"name": span.name, "attributes": dict(span.attributes or {})})
        assert SECRET not in text
        assert ITEM_SECRET not in text
        assert api.token not in text


def test_a_refusal_before_routing_names_its_route_and_its_error(
    api: Api, server: RunningServer, caplog: pytest.LogCaptureFixture,
) -> None:
    # A bad token, a body too large or a wrong method is refused before (or beside) the
    # handler: its line still names the route the request was sent to and the `_tag` it was
    # answered, as the handlers' errors are; a path no route has is `unmatched`.
    caplog.set_level(logging.INFO)
    bad = {"Authorization": f"Bearer {BAD_TOKEN}"}
    assert httpx.get(f"{server.url}/v1/sessions/ses-1", headers={
        **bad, "X-Request-Id": "rid-token"}).status_code == 401
    assert httpx.post(f"{server.url}/graphql", json={"query": "{ agents { nodes { id } } }"},
                      headers={**bad, "X-Request-Id": "rid-graphql"}).status_code == 401
    assert api.get("/v1/nowhere", headers={"X-Request-Id": "rid-nowhere"}).status_code == 404
    assert api.http.delete("/v1/agents", headers={
        "X-Request-Id": "rid-method"}).status_code == 405
    with socket.create_connection(("127.0.0.1", server.port)) as sock:  # none of it sent
        sock.sendall(
            b"POST /v1/sessions HTTP/1.1\r\nHost: memory\r\nContent-Type: application/json\r\n"
            + f"Authorization: Bearer {api.token}\r\nX-Request-Id: rid-large\r\n".encode()
            + f"Content-Length: {server.settings.max_body_bytes + 1}\r\n\r\n".encode())
        assert sock.recv(64).startswith(b"HTTP/1.1 413 ")
    logged(caplog, "rid-token", "rid-graphql", "rid-nowhere", "rid-method", "rid-large")
    lines = {line["requestId"]: line for r in caplog.records
             if "status" in (line := getattr(r, "fields", {}))}
    assert (lines["rid-token"]["route"], lines["rid-token"]["error"]) == (
        "/v1/sessions/{id}", "Unauthorized")
    assert (lines["rid-graphql"]["route"], lines["rid-graphql"]["error"]) == (
        "/graphql", "Unauthorized")
    assert (lines["rid-nowhere"]["route"], lines["rid-nowhere"]["error"]) == (
        "unmatched", "NotFound")
    assert (lines["rid-method"]["route"], lines["rid-method"]["error"]) == (
        "/v1/agents", "MethodNotAllowed")
    assert (lines["rid-large"]["route"], lines["rid-large"]["error"]) == (
        "/v1/sessions", "PayloadTooLarge")


def test_a_client_that_hangs_up_while_sending_its_body_is_no_server_error(
    api: Api, server: RunningServer, caplog: pytest.LogCaptureFixture,
) -> None:
    # The body is cut off by the client going away: one line, 499 as nginx logs it, no
    # traceback and no 500 counted.
    caplog.set_level(logging.INFO)
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(
            b"POST /v1/sessions HTTP/1.1\r\nHost: memory\r\nContent-Type: application/json\r\n"
            + f"Authorization: Bearer {api.token}\r\n".encode()
            + b"X-Request-Id: rid-gone\r\nContent-Length: 1000\r\n\r\n{\"agent\": "
        )
    logged(caplog, "rid-gone")
    records = [r for r in caplog.records
               if getattr(r, "fields", {}).get("requestId") == "rid-gone"]
    assert [r.exc_info for r in records] == [None]
    assert records[0].levelno == logging.INFO
    line = json.loads(JsonLines().format(records[0]))
    assert (line["route"], line["status"], line["error"]) == (
        "/v1/sessions", 499, "ClientDisconnect")
