"""Request ids, the log lines of requests and errors (with a planted secret), and traces."""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from app.logs import JsonLines, PlainText
from app.store.catalog import CYPHER_DIR, files_of
from app.store.database import Target
from tests import conftest
from tests.conftest import (
    Api,
    Graph,
    RunningServer,
    assistant,
    claims_nothing,
    make_token,
    user,
)
from tests.openai_stub import OpenAIStub, changes

SECRET = "planted-fact-8841 lives behind the blue door"
ITEM_SECRET = "planted-item-5527 is what the user said"
BAD_TOKEN = "obm_planted_bad_token_0042"


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


@pytest.fixture
def traced(
    neo4j_target: Target, openai_stub: OpenAIStub, graph: Graph
) -> Iterator[tuple[RunningServer, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    running = RunningServer(
        conftest.test_settings(openai_stub, neo4j_target), neo4j_target, tracer_provider=provider
    )
    yield running, exporter
    running.stop()


def finished_spans(exporter: InMemorySpanExporter, *names: str) -> list[ReadableSpan]:
    """The spans finished so far, once each of `names` is among them (a span ends just after
    what it wraps answers, so a client can be a moment ahead of it)."""
    deadline = time.monotonic() + 20
    while True:
        spans = list(exporter.get_finished_spans())
        missing = set(names) - {span.name for span in spans}
        if not missing:
            return spans
        if time.monotonic() > deadline:
            raise AssertionError(f"no span {sorted(missing)} in {[s.name for s in spans]}")
        time.sleep(0.05)


def test_a_memory_command_is_one_statement_unless_it_is_refused(
    traced: tuple[RunningServer, InMemorySpanExporter], neo4j_target: Target,
    server: RunningServer,
) -> None:
    # issue 12: a Remember, Forget or Configure is one statement (lock, check, write, view);
    # a refused one (S12: a stale revision) reads the lock's state to say why, and writes nothing
    shared, (server, exporter) = server, traced
    api = Api(server.url, make_token(neo4j_target, "acme", "ana"))
    with claims_nothing(shared):
        sid = api.session()["session"]["id"]
        api.remember(sid, "budget", "The trip budget is 1500 EUR.")
        api.ok(api.command(sid, {"_tag": "Forget", "key": "budget"}))
        api.ok(api.command(sid, {"_tag": "Configure", "use": False}))
        current = api.view(sid)["session"]
        stale = api.post(f"/v1/sessions/{sid}/memory", {
            "expected": current["head"], "revision": current["revision"] - 1,
            "command": {"_tag": "Configure", "use": True}})
        assert stale.status_code == 409, stale.text
        assert api.view(sid)["session"]["revision"] == current["revision"]
        spans = finished_spans(exporter, "POST /v1/sessions/{id}/memory")
    api.http.close()
    statements = statements_of(spans, "POST /v1/sessions/{id}/memory")
    assert statements == [
        ["lock_session+record_memory_edit+session_views"],
        ["lock_session+record_memory_edit+session_views"],
        # the Forget's answer is the view at the revision the Configure names: it needs no read
        ["configure_session"],
        ["configure_session+session_views", "lock_session"],
    ]


def test_a_configure_on_the_view_answered_here_is_one_statement_and_answers_a_fresh_read(
    traced: tuple[RunningServer, InMemorySpanExporter], neo4j_target: Target,
    server: RunningServer,
) -> None:
    # issue 12: a Configure made at the revision of the view this server last answered changes
    # no entry, so it answers that view with its own row (S4: the switches as resolved with the
    # org's settings now, S15: the revision after it). A change made elsewhere (the other server)
    # moves the revision, so the next Configure reads the view again; the org's settings move no
    # revision and come with the Configure's row.
    shared, (mine, exporter) = server, traced
    token = make_token(neo4j_target, "acme", "ana")
    here, there = Api(mine.url, token), Api(shared.url, token)
    with claims_nothing(shared, mine):
        sid = here.session()["session"]["id"]
        here.remember(sid, "budget", "The trip budget is 1500 EUR.")

        def configure(use: bool) -> dict[str, Any]:  # the view, then the Configure
            answer: dict[str, Any] = here.ok(here.command(sid, {"_tag": "Configure", "use": use}))
            return answer

        answers = [configure(False)]
        there.remember(sid, "seat", "Ana wants a window seat.")
        answers.append(configure(True))
        there.ok(there.patch("/v1/org/settings", {"memory": {"generate": False}}))
        answers.append(configure(False))
        fresh = [here.view(sid), there.view(sid)]
        spans = finished_spans(exporter, "POST /v1/sessions/{id}/memory")
    for client in (here, there):
        client.http.close()
    statements = statements_of(spans, "POST /v1/sessions/{id}/memory")
    remember = "lock_session+record_memory_edit+session_views"
    assert statements == [[remember], ["configure_session"], ["configure_session"],
                          ["configure_session"]]
    # each answer is what a read right after it shows, entries and all
    assert [sorted(a["memory"]["entries"]) for a in answers] == [
        ["budget"], ["budget", "seat"], ["budget", "seat"]]
    assert [(a["memory"]["overrides"], a["memory"]["settings"]) for a in answers] == [
        ({"use": False}, {"use": False, "generate": True}),
        ({"use": True}, {"use": True, "generate": True}),
        ({"use": False}, {"use": False, "generate": False}),
    ]
    assert [a["session"]["revision"] for a in answers] == [2, 4, 5]
    assert answers[-1] == fresh[0] == fresh[1]


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
    # issue 12: a turn is two statements: the lock with what its instructions can reach (the
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


def test_a_turn_after_a_turn_here_is_one_statement_until_the_session_moves(
    traced: tuple[RunningServer, InMemorySpanExporter], neo4j_target: Target,
    server: RunningServer, graph: Graph,
) -> None:
    # issue 12: a turn decides from what the last turn in this server left its session, and
    # records in the statement that locks and reads. A change made elsewhere (the other server)
    # makes it decide again from what that statement read under the lock: a Remember (the
    # revision moved), an agent's entry (its memory version moved), or the org's settings
    # (neither moved: that turn is rolled back, then decided again). S5: each turn is shown
    # memory as it is when the turn starts, and is recorded once.
    shared, (mine, exporter) = server, traced
    token = make_token(neo4j_target, "acme", "ana")
    here, there = Api(mine.url, token), Api(shared.url, token)
    with claims_nothing(shared, mine):
        agent = here.agent()["id"]
        sid = here.session(agent)["session"]["id"]
        there.remember(sid, "budget", "The trip budget is 1500 EUR.")
        answers = [here.turn(sid, user("Hello.")), here.turn(sid, user("Where to?"))]
        there.remember(sid, "seat", "Ana wants a window seat.")
        answers += [here.turn(sid, user("Book it.")), here.turn(sid, user("Thanks."))]
        version = there.ok(there.get(f"/v1/agents/{agent}/memory"))["version"]
        there.ok(there.post(f"/v1/agents/{agent}/memory", {"expected": version, "command": {
            "_tag": "Remember", "key": "tone", "content": "Answer briefly.",
            "kind": "procedure"}}))
        answers.append(here.turn(sid, user("And the hotel?")))
        there.ok(there.patch("/v1/org/settings", {"memory": {"use": False}}))
        answers.append(here.turn(sid, user("Anything else?")))
        deadline = time.monotonic() + 20
        while True:
            spans = list(exporter.get_finished_spans())
            posts = sorted((s for s in spans if s.name == "POST /v1/sessions/{id}/turns"),
                           key=lambda s: s.start_time or 0)
            if len(posts) == len(answers) or time.monotonic() > deadline:
                break
            time.sleep(0.05)
    for client in (here, there):
        client.http.close()
    statements = statements_of(spans, "POST /v1/sessions/{id}/turns")
    lock, record = "lock_session+instruction_entries", "record_turn"
    both = "lock_session+instruction_entries+?record_turn"
    assert statements == [
        [lock, record],  # no turn here before: it decides from what the lock reads
        [both],
        [both, record],  # the Remember moved the revision: decided again in the same statement
        [both],
        [both, record],  # the agent's entry moved its memory version
        [both, lock, record],  # the settings moved neither: rolled back, then decided again
    ]
    shown = [(a["turn"]["shown"], a["turn"]["shownAgent"]) for a in answers]
    assert shown == [
        (["budget"], []), (["budget"], []),
        (["seat", "budget"], []), (["seat", "budget"], []),
        (["seat", "budget"], ["tone"]),
        ([], ["tone"]),
    ]
    # the graph: each turn once, as it was answered, with the changes it saw
    turns = graph.rows(
        "MATCH (t:Turn)-[:IN_SESSION]->(:Session {id: $id}) "
        "RETURN t.id AS id, t.shown AS shown, t.shownAgent AS shownAgent, t.revision AS revision,"
        " COUNT { (t)-[:SAW]->() } AS saw ORDER BY t.revision", id=sid)
    assert [(t["id"], t["shown"], t["shownAgent"]) for t in turns] == [
        (a["turn"]["id"], *s) for a, s in zip(answers, shown, strict=True)
    ]
    assert [t["saw"] for t in turns] == [1, 1, 2, 2, 3, 1]
    assert [t["revision"] for t in turns] == [a["session"]["revision"] for a in answers]
    # the two Remembers' edit items and the six turns' items, each taking the next id
    assert head_items(graph, sid) == [f"i-{n:02d}" for n in range(1, 9)]


def statements_of(spans: list[ReadableSpan], route: str) -> list[list[str]]:
    """Per request to `route`, oldest first, the names of the statements it ran (its child
    spans, but for authentication's cached token lookup)."""
    posts = sorted((s for s in spans if s.name == route), key=lambda s: s.start_time or 0)
    return [
        [c.name for c in sorted(spans, key=lambda c: c.start_time or 0)
         if c.parent and c.parent.span_id == post.context.span_id and c.name != "find_principal"]
        for post in posts
    ]


def head_items(graph: Graph, sid: str) -> list[str]:
    """The ids of the items on the session's head, in order."""
    return [row["id"] for row in graph.rows(
        "MATCH (:Session {id: $id})-[:HEAD]->(:Version)-[:PARENT*0..]->(:Version)-[:ADDS]->(i)"
        " RETURN i.id AS id ORDER BY i.seq", id=sid)]
