"""Live views: GraphQL subscriptions over `graphql-transport-ws` on `/graphql`, against real
servers. Two services on one Neo4j: the subscriber is on one, the writes on the other, so what
is heard came through the poll of the subscriber's process, not its own writes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect
from websockets.typing import Subprotocol

from app.api.responses.sessions import session_view_json
from app.domain.principals import Principal
from app.memory.agents.memory import AgentMemories
from app.memory.views.live import Live
from app.store.database import Database, Target
from tests.api.test_agent_memory import agent_remember
from tests.api.test_crash import Service
from tests.api.test_promotion import subagent
from tests.conftest import Api, RunningServer, flat, user
from tests.openai_stub import OpenAIStub, Reply, changes
from tests.test_cli import run_cli

STUB = "openai:test"
WAIT = 20.0  # seconds for an outcome to arrive; generous, never a window

SESSION = """subscription($id: ID!) { memoryChanged(sessionId: $id) {
  id head revision memory { entries { nodes { key content status } } overrides { use } } } }"""
RUNS = """subscription($id: ID!) { runFinished(sessionId: $id) { id status error read } }"""
AGENT = """subscription($id: ID!) { agentMemoryChanged(agentId: $id) {
  version entries { nodes { key content visibility about } } } }"""


class Socket:
    """A graphql-transport-ws client of one server."""

    def __init__(self, ws: ClientConnection, payload: dict[str, Any] | None) -> None:
        self.ws = ws
        self.waiting: dict[str, list[dict[str, Any]]] = {}  # messages of other subscriptions
        self.send({"type": "connection_init", "payload": payload or {}})

    def send(self, message: dict[str, Any]) -> None:
        self.ws.send(json.dumps(message))

    def receive(self) -> dict[str, Any]:
        while True:
            message: dict[str, Any] = json.loads(self.ws.recv(timeout=WAIT))
            if message["type"] == "ping":
                self.send({"type": "pong"})
                continue
            return message

    def ack(self) -> Socket:
        assert self.receive() == {"type": "connection_ack"}
        return self

    def subscribe(self, op: str, query: str, /, **variables: Any) -> None:
        self.send({"id": op, "type": "subscribe",
                   "payload": {"query": query, "variables": variables}})

    def message(self, id: str) -> dict[str, Any]:
        """The next message of subscription `id`; those of others wait for their turn."""
        if self.waiting.get(id):
            return self.waiting[id].pop(0)
        while True:
            message = self.receive()
            if message.get("id") == id:
                return message
            self.waiting.setdefault(message.get("id", ""), []).append(message)

    def next(self, id: str) -> dict[str, Any]:
        """The next result of subscription `id`, its connections flattened to their nodes."""
        message = self.message(id)
        assert message["type"] == "next", message
        payload: dict[str, Any] = flat(message["payload"])
        return payload

    def closed_with(self) -> int | None:
        with pytest.raises(ConnectionClosed) as closed:
            self.receive()
        return closed.value.rcvd.code if closed.value.rcvd else None


@pytest.fixture
def sockets() -> Iterator[Callable[..., Socket]]:
    """Open a socket to a server's `/graphql`, signed in with `token` in connection_init (or
    with another `payload`, or upgrade request `headers`); all are closed after the test."""
    with contextlib.ExitStack() as stack:

        def open_socket(
            server: RunningServer, token: str | None = None,
            payload: dict[str, Any] | None = None, headers: dict[str, str] | None = None,
        ) -> Socket:
            ws = stack.enter_context(connect(
                server.url.replace("http://", "ws://") + "/graphql",
                subprotocols=[Subprotocol("graphql-transport-ws")],
                additional_headers=headers,
                open_timeout=WAIT,
            ))
            return Socket(ws, {"Authorization": f"Bearer {token}"} if token else payload)

        yield open_socket


@pytest.fixture
def clients() -> Iterator[Callable[[RunningServer, str], Api]]:
    """HTTP clients of any server, for a token; closed after the test."""
    made: list[Api] = []

    def client(server: RunningServer, token: str) -> Api:
        made.append(Api(server.url, token))
        return made[-1]

    yield client
    for api in made:
        api.http.close()


@pytest.fixture
def other(start_server: Callable[..., RunningServer]) -> RunningServer:
    """A second service process on the same Neo4j: the writer's."""
    return start_server()


def state(view: dict[str, Any]) -> tuple[str, int, dict[str, tuple[str, str]]]:
    """A Session view (REST or GraphQL) as its head, revision and entries."""
    session, memory = view.get("session", view), view["memory"]
    entries = memory["entries"]
    if isinstance(entries, list):  # GraphQL lists entries, REST maps them by key
        found = {e["key"]: (e["content"], e["status"].lower()) for e in entries}
    else:
        found = {k: (e["content"], e["status"]) for k, e in entries.items()}
    return session["head"], session["revision"], found


def test_a_subscriber_hears_every_change_made_by_another_process_in_order(
    api: Api, server: RunningServer, other: RunningServer, sockets: Callable[..., Socket],
    openai_stub: OpenAIStub, clients: Callable[[RunningServer, str], Api],
) -> None:
    # S12-S17: one view per revision, in revision order, with the head and memory
    # of that revision; writes by a person, configure, revert, a turn and its consolidation.
    writer = clients(other, api.token)
    sid = writer.session(model=STUB)["session"]["id"]
    live = sockets(server, api.token).ack()
    live.subscribe("1", SESSION, id=sid)
    assert state(live.next("1")["data"]["memoryChanged"])[1:] == (0, {})

    truth: dict[int, tuple[str, dict[str, tuple[str, str]]]] = {}

    def keep(view: dict[str, Any]) -> None:
        head, revision, entries = state(view)
        truth[revision] = (head, entries)

    keep(writer.remember(sid, "budget", "The trip budget is 1500 EUR."))
    keep(writer.remember(sid, "hotel", "The hotel is near the station."))
    keep(writer.ok(writer.command(sid, {"_tag": "Forget", "key": "hotel"})))
    keep(writer.ok(writer.command(sid, {"_tag": "Configure", "use": False})))
    current = writer.view(sid)["session"]
    keep(writer.ok(writer.post(f"/v1/sessions/{sid}/revert", {
        "expected": current["head"], "revision": current["revision"], "to": truth[1][0]})))
    openai_stub.script(changes({"op": "remember", "key": "seat", "kind": "preference",
                                "content": "Ana prefers the aisle.", "sources": ["m-1"]}))
    writer.turn(sid, user("I like the aisle.", id="m-1"))  # revision 6, its run's is 7
    writer.wait_idle(sid)
    final = writer.view(sid)
    keep(final)
    assert final["session"]["revision"] == 7

    heard = [live.next("1")["data"]["memoryChanged"] for _ in range(7)]

    assert [view["revision"] for view in heard] == list(range(1, 8))
    for view in heard:
        head, revision, entries = state(view)
        if revision in truth:
            assert (head, entries) == truth[revision], revision
        at_version = writer.ok(writer.get(f"/v1/sessions/{sid}/versions/{head}"))
        assert state({"session": {"head": head, "revision": revision}, **at_version})[2] == (
            entries
        )
    assert heard[3]["memory"]["overrides"]["use"] is False  # S15: configure, same head
    assert heard[3]["head"] == heard[2]["head"]
    assert state(heard[6])[2] == {
        "budget": ("The trip budget is 1500 EUR.", "active"),
        "seat": ("Ana prefers the aisle.", "active"),
    }

    # S3: a fork's first version is what its subscriber hears first.
    forked = writer.ok(writer.post(f"/v1/sessions/{sid}/fork", {}), 201)
    live.subscribe("2", SESSION, id=forked["session"]["id"])
    assert state(live.next("2")["data"]["memoryChanged"]) == state(forked)


def test_a_subscriber_far_behind_hears_every_revision_in_order_a_few_at_a_time(
    api: Api, start_server: Callable[..., RunningServer], other: RunningServer,
    sockets: Callable[..., Socket], clients: Callable[[RunningServer, str], Api],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a subscriber whose process sees many revisions at once (another process wrote them
    # between two of its polls) is sent their views a bounded number at a time (here 4), each
    # revision once, in order, up to the view now
    monkeypatch.setattr("app.memory.views.live.CATCH_UP", 4)
    slow = start_server(live_poll_seconds=2)
    writer = clients(other, api.token)
    sid = writer.session()["session"]["id"]
    live = sockets(slow, api.token).ack()
    live.subscribe("1", SESSION, id=sid)
    assert live.next("1")["data"]["memoryChanged"]["revision"] == 0
    for n in range(1, 14):
        writer.remember(sid, f"note-{n}", f"Note {n}.")
    heard = [live.next("1")["data"]["memoryChanged"] for _ in range(13)]
    assert [view["revision"] for view in heard] == list(range(1, 14))
    assert [sorted(e["key"] for e in view["memory"]["entries"]) for view in heard] == [
        sorted(f"note-{k}" for k in range(1, n + 1)) for n in range(1, 14)]


def test_a_process_hears_its_own_writes_at_once_without_its_poll(
    api: Api, start_server: Callable[..., RunningServer], sockets: Callable[..., Socket],
    clients: Callable[[RunningServer, str], Api],
) -> None:
    # The service's own writes wake its subscribers when they commit: with its poll
    # slowed to once an hour, a subscriber of the writing process still hears each one.
    own = start_server(live_poll_seconds=3600.0)
    writer = clients(own, api.token)
    sid = writer.session()["session"]["id"]
    live = sockets(own, api.token).ack()
    live.subscribe("1", SESSION, id=sid)
    assert live.next("1")["data"]["memoryChanged"]["revision"] == 0

    answer = writer.remember(sid, "budget", "The trip budget is 1500 EUR.")

    assert state(live.next("1")["data"]["memoryChanged"]) == state(answer)


def test_the_views_of_revisions_passed_are_rebuilt_from_their_versions(
    api: Api, neo4j_target: Target,
) -> None:
    # Several revisions landed since a subscriber's last view: one view each, in order, with
    # the head and memory of that revision (a configure keeps the head, S15).
    sid = api.session()["session"]["id"]
    start = api.view(sid)["session"]["head"]
    answers = [
        api.remember(sid, "budget", "The trip budget is 1500 EUR."),
        api.ok(api.command(sid, {"_tag": "Configure", "generate": False})),
        api.ok(api.command(sid, {"_tag": "Forget", "key": "budget"})),
        api.remember(sid, "hotel", "The hotel is near the station."),
    ]

    async def read() -> list[Any]:
        db = await Database.connect(neo4j_target)
        try:
            live = Live(db, AgentMemories(db))
            return await live.session_views(Principal("acme", person="ana"), sid, 0, start)
        finally:
            await db.close()

    views = asyncio.run(read())

    assert [state(dict(session_view_json(v))) for v in views] == [state(a) for a in answers]


def test_each_run_is_heard_once_when_it_ends(
    api: Api, server: RunningServer, other: RunningServer, sockets: Callable[..., Socket],
    openai_stub: OpenAIStub, clients: Callable[[RunningServer, str], Api],
) -> None:
    # S11: runFinished gives each consolidation run of the session once, as it
    # ends, failed or succeeded, in the order they ended.
    writer = clients(other, api.token)
    sid = writer.session(model=STUB)["session"]["id"]
    gate, started = threading.Event(), threading.Event()  # the first run ends when let go
    openai_stub.script(
        Reply(status=500, gate=gate, started=started),
        changes({"op": "remember", "key": "budget", "kind": "fact",
                 "content": "The trip budget is 1500 EUR.", "sources": ["m-1"]}),
        changes(),
    )
    live = sockets(server, api.token).ack()
    live.subscribe("runs", RUNS, id=sid)
    live.subscribe("view", SESSION, id=sid)
    assert live.next("view")["data"]["memoryChanged"]["revision"] == 0
    writer.turn(sid, user("Message 1.", id="m-1"))
    assert started.wait(WAIT), "the model was not asked"
    assert live.next("view")["data"]["memoryChanged"]["revision"] == 1  # the turn, heard
    gate.set()
    writer.wait_idle(sid)
    for n in (2, 3):
        writer.turn(sid, user(f"Message {n}.", id=f"m-{n}"))
        writer.wait_idle(sid)
    runs = list(reversed(writer.wait_idle(sid)))  # oldest first

    heard: list[dict[str, Any]] = []
    for _ in runs:
        try:
            heard.append(live.next("runs")["data"]["runFinished"])
        except TimeoutError:  # say what was heard, and what the graph holds, not just "no"
            raise AssertionError(f"heard {heard} of the runs {runs}") from None

    assert [(r["id"], r["status"]) for r in heard] == [
        (r["id"], r["status"].upper()) for r in runs
    ]
    assert [r["status"] for r in heard] == ["FAILED", "SUCCEEDED", "SUCCEEDED"]
    assert heard[1]["read"] == ["m-1", "m-2"]


def test_a_frame_that_is_no_json_closes_the_socket_with_4400(
    api: Api, server: RunningServer, sockets: Callable[..., Socket],
) -> None:
    # graphql-transport-ws: a message that does not parse closes the socket with 4400; a frame
    # is read as a body is, so a key said twice or NaN is none either
    for frame in ('{"type": "ping"', '{"type": "ping", "type": "pong"}',
                  '{"type": "ping", "payload": {"n": NaN}}'):
        socket = sockets(server, api.token).ack()
        socket.ws.send(frame)
        assert socket.closed_with() == 4400, frame


def test_a_socket_without_a_valid_token_is_closed_with_4403(
    api: Api, member: Api, server: RunningServer, sockets: Callable[..., Socket],
) -> None:
    # The same Bearer tokens, in connection_init; refused per the protocol.
    sid = api.session()["session"]["id"]
    assert sockets(server).closed_with() == 4403
    assert sockets(server, "not-a-token").closed_with() == 4403
    revoked = sockets(server, payload={"Authorization": "Basic abc"})
    assert revoked.closed_with() == 4403

    # The token may also come as headers, in any case, or on the upgrade request itself.
    for socket in (
        sockets(server, payload={"headers": {"authorization": f"Bearer {api.token}"}}),
        sockets(server, payload={"AUTHORIZATION": f"Bearer {api.token}"}),
        sockets(server, headers={"Authorization": f"Bearer {api.token}"}),
    ):
        socket.ack().subscribe("1", SESSION, id=sid)
        assert socket.next("1")["data"]["memoryChanged"]["id"] == sid


def test_a_bad_token_on_the_upgrade_request_is_refused_as_in_connection_init(
    api: Api, server: RunningServer, sockets: Callable[..., Socket],
) -> None:
    # The socket is accepted and closed with graphql-transport-ws' 4403, as a bad token in
    # connection_init is, not refused by a bare 403 to the upgrade request, which a client
    # takes for a network failure and tries again.
    bad = sockets(server, headers={"Authorization": "Bearer obm_not-a-token"})
    assert bad.closed_with() == 4403

    # a good token in connection_init signs in all the same
    sid = api.session()["session"]["id"]
    socket = sockets(server, api.token, headers={"Authorization": "Bearer obm_not-a-token"})
    socket.ack().subscribe("1", SESSION, id=sid)
    assert socket.next("1")["data"]["memoryChanged"]["id"] == sid


def test_a_token_that_is_not_text_closes_the_socket_with_4403(
    server: RunningServer, sockets: Callable[..., Socket],
) -> None:
    # JSON can hold half of a surrogate pair ("\ud800"), which no token is: 4403, as for
    # any unknown token, and not an error of the server.
    socket = sockets(server, payload={"Authorization": "Bearer obm_\ud800"})
    assert socket.closed_with() == 4403


def test_a_person_cannot_subscribe_to_another_members_session(
    api: Api, member: Api, server: RunningServer, sockets: Callable[..., Socket],
) -> None:
    # A person reaches only their own sessions: another member's is NotFound, as in a query.
    sid = api.session()["session"]["id"]
    ben = sockets(server, member.token).ack()
    for id, query in (("1", SESSION), ("2", RUNS)):
        ben.subscribe(id, query, id=sid)
        answer = ben.next(id)
        assert answer["data"] is None
        assert [e["extensions"]["code"] for e in answer["errors"]] == ["NOT_FOUND"]
        assert ben.message(id) == {"id": id, "type": "complete"}


def test_a_persons_agent_memory_view_hides_another_members_private_versions(
    api: Api, member: Api, server: RunningServer, other: RunningServer,
    sockets: Callable[..., Socket], clients: Callable[[RunningServer, str], Api],
) -> None:
    # A9: a person is not told of a version that touched only another member's private
    # entries; the member who owns it is.
    agent = api.agent("shared planner", shared=True)["id"]
    ana = sockets(server, api.token).ack()
    ben = sockets(server, member.token).ack()
    for socket in (ana, ben):
        socket.subscribe("a", AGENT, id=agent)
        assert socket.next("a")["data"]["agentMemoryChanged"] == {"version": 0, "entries": []}

    ben_writer, ana_writer = clients(other, member.token), clients(other, api.token)
    agent_remember(ben_writer, agent, "seat", "Ben prefers the aisle.", "preference",
                   about="ben", visibility="private")
    heard_by_ben = ben.next("a")["data"]["agentMemoryChanged"]
    agent_remember(ana_writer, agent, "tone", "Keep answers friendly.")

    heard_by_ana = ana.next("a")["data"]["agentMemoryChanged"]
    assert heard_by_ben["version"] == 1
    assert [e["key"] for e in heard_by_ben["entries"]] == ["seat"]
    assert heard_by_ana["version"] == 2
    assert [(e["key"], e["visibility"]) for e in heard_by_ana["entries"]] == [("tone", "SHARED")]
    assert {e["key"] for e in ben.next("a")["data"]["agentMemoryChanged"]["entries"]} == {
        "seat", "tone"}


def test_a_subscription_sent_over_plain_http_is_refused_naming_the_socket(api: Api) -> None:
    # A subscription streams over the WebSocket; over POST or GET it is a 400 on
    # `query` that says where to send it, never a null run once as a query.
    sid = api.session()["session"]["id"]
    named = (
        "query Q($id: ID!) { session(id: $id) { id } } "
        "subscription Live($id: ID!) { memoryChanged(sessionId: $id) { id } }"
    )
    for response in (
        api.post("/graphql", {"query": SESSION, "variables": {"id": sid}}),
        api.post("/graphql", {"query": named, "operationName": "Live", "variables": {"id": sid}}),
        api.http.get("/graphql", params={"query": SESSION, "variables": json.dumps({"id": sid})}),
    ):
        assert response.status_code == 400, response.text
        body = response.json()
        assert body["_tag"] == "ValidationError"
        assert body["field"] == "query"
        assert "WebSocket (graphql-transport-ws)" in body["message"]

    # The same document's query still runs over HTTP.
    answer = api.post("/graphql", {"query": named, "operationName": "Q", "variables": {"id": sid}})
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"data": {"session": {"id": sid}}}


def test_a_subscription_holding_what_graphql_refuses_is_refused_before_it_runs(
    api: Api, server: RunningServer, sockets: Callable[..., Socket],
) -> None:
    # as over HTTP: a variable that is not text names its argument, and a document of several
    # operations needs the name of the one to run; the socket stays open for the next
    sid = api.session()["session"]["id"]
    socket = sockets(server, api.token).ack()
    unnamed = (SESSION.replace("subscription(", "subscription Memory(") + " "
               + RUNS.replace("subscription(", "subscription Runs("))
    for id, query, variables, field in (
        ("1", SESSION, {"id": "ses-\ud800"}, "sessionId"),  # JSON escapes it as \ud800
        ("2", AGENT, {"id": "agt-\udfff"}, "agentId"),
        ("3", "query($id: ID!) { session(id: $id) { id } }", {"id": "\ud800"}, "id"),
        ("4", unnamed, {"id": sid}, "operationName"),
    ):
        socket.subscribe(id, query, **variables)
        answer = socket.message(id)
        if answer["type"] == "error":  # refused before it started: the protocol's last word
            errors = answer["payload"]
        else:  # a subscription's stream answers the refusal, then completes
            assert answer["type"] == "next", answer
            assert answer["payload"]["data"] is None, answer
            errors = answer["payload"]["errors"]
            assert socket.message(id) == {"id": id, "type": "complete"}
        assert [e["extensions"] for e in errors] == [
            {"code": "VALIDATION_ERROR", "_tag": "ValidationError", "field": field}], answer
    socket.subscribe("5", SESSION, id=sid)
    assert socket.next("5")["data"]["memoryChanged"]["id"] == sid


def test_a_socket_whose_person_is_erased_hears_nothing_more(
    api: Api, platform: Api, server: RunningServer, sockets: Callable[..., Socket],
) -> None:
    # SPEC 7: an erased person's tokens are revoked, and a socket they signed in, in its
    # connection_init or on its upgrade request, hears no more of the org: the next event is
    # refused as a request with the token is
    agent = platform.agent("shared planner", shared=True)["id"]
    by_payload = sockets(server, api.token).ack()
    by_header = sockets(server, headers={"Authorization": f"Bearer {api.token}"}).ack()
    for socket in (by_payload, by_header):
        socket.subscribe("a", AGENT, id=agent)
        assert socket.next("a")["data"]["agentMemoryChanged"] == {"version": 0, "entries": []}

    platform.ok(platform.post("/v1/org/persons/ana/erase"))
    agent_remember(platform, agent, "tone", "Keep answers friendly.")

    for socket in (by_payload, by_header):
        refused = socket.message("a")
        assert refused["type"] == "next", refused
        assert refused["payload"]["data"] is None
        assert [e["extensions"]["code"] for e in refused["payload"]["errors"]] == ["UNAUTHORIZED"]
        assert socket.message("a") == {"id": "a", "type": "complete"}
        # nor does the socket run a query, or start a subscription, for her any more
        socket.subscribe("q", "query($id: ID!) { agent(id: $id) { id } }", id=agent)
        socket.subscribe("s", AGENT, id=agent)
        for op in ("q", "s"):
            refused = socket.message(op)
            # (refused before it runs: the protocol's `error`; a subscription's stream may
            # carry it as a result with no data)
            errors = refused["payload"]
            if refused["type"] == "next":
                assert errors["data"] is None, refused
                errors = errors["errors"]
            else:
                assert refused["type"] == "error", refused
            assert [e["extensions"]["code"] for e in errors] == ["UNAUTHORIZED"], refused


def test_an_erasure_that_takes_an_entry_seen_is_heard(
    member: Api, platform: Api, server: RunningServer, other: RunningServer,
    sockets: Callable[..., Socket], clients: Callable[[RunningServer, str], Api],
) -> None:
    # SPEC 7, A9: an erasure's version records no change, yet the entries it takes leave every
    # view: a subscriber who saw one is sent the memory without it
    _, sub = subagent(member)
    member.remember(sub, "seat", "Ben prefers the aisle.", "preference")
    agent = member.ok(member.post(f"/v1/sessions/{sub}/promote", {}), 201)["agent"]["id"]
    watching = sockets(server, platform.token).ack()
    watching.subscribe("a", AGENT, id=agent)
    seen = watching.next("a")["data"]["agentMemoryChanged"]
    assert [e["key"] for e in seen["entries"]] == ["seat"]

    eraser = clients(other, platform.token)
    eraser.ok(eraser.post("/v1/org/persons/ben/erase"))

    heard = watching.next("a")["data"]["agentMemoryChanged"]
    assert heard["version"] > seen["version"]
    assert heard["entries"] == []


def test_a_fork_watcher_hears_its_sources_items_erased_when_the_source_is_deleted(
    api: Api, server: RunningServer, other: RunningServer, sockets: Callable[..., Socket],
    clients: Callable[[RunningServer, str], Api],
) -> None:
    # SPEC 7: a fork's entries cite its source's items; deleting the source erases them, and a
    # subscriber of the fork is sent its view with them erased, as a query would answer it
    sid = api.session()["session"]["id"]
    api.remember(sid, "trip", "FORK-SEEN-1f")
    fork = api.ok(api.post(f"/v1/sessions/{sid}/fork", {}), 201)["session"]["id"]
    query = """subscription($id: ID!) { memoryChanged(sessionId: $id) {
      revision memory { entries { nodes { key sources { content } } } } } }"""
    live = sockets(server, api.token).ack()
    live.subscribe("fork", query, id=fork)
    seen = live.next("fork")["data"]["memoryChanged"]
    assert seen["memory"]["entries"] == [
        {"key": "trip", "sources": [{"content": "Remember trip (fact): FORK-SEEN-1f"}]}
    ]

    writer = clients(other, api.token)
    assert writer.ok(writer.http.delete(f"/v1/sessions/{sid}")) == {"deleted": sid}

    heard = live.next("fork")["data"]["memoryChanged"]
    assert heard["revision"] > seen["revision"]
    assert heard["memory"]["entries"] == [{"key": "trip", "sources": [{"content": None}]}]
    answered = flat(api.graphql(query.replace("subscription", "query").replace(
        "memoryChanged(sessionId: $id)", "session(id: $id)"), id=fork))
    assert answered["data"]["session"]["memory"] == heard["memory"]


def test_a_deleted_sessions_run_stream_ends_not_found(
    api: Api, server: RunningServer, other: RunningServer, sockets: Callable[..., Socket],
    clients: Callable[[RunningServer, str], Api],
) -> None:
    # SPEC 7: a deleted session is not found by any read: a runFinished stream that waits for
    # its runs ends with NOT_FOUND, as a query would be answered, and completes
    writer = clients(other, api.token)
    sid = writer.session()["session"]["id"]
    live = sockets(server, api.token).ack()
    live.subscribe("runs", RUNS, id=sid)
    live.subscribe("view", SESSION, id=sid)
    assert live.next("view")["data"]["memoryChanged"]["revision"] == 0  # both are watching
    assert writer.ok(writer.http.delete(f"/v1/sessions/{sid}")) == {"deleted": sid}
    for op in ("runs", "view"):
        ended = live.message(op)
        assert ended["type"] == "next", ended
        assert [e["extensions"]["code"] for e in ended["payload"]["errors"]] == ["NOT_FOUND"]
        assert live.message(op) == {"id": op, "type": "complete"}


def test_every_stream_of_a_deleted_org_ends(
    api: Api, platform: Api, server: RunningServer, sockets: Callable[..., Socket],
    neo4j_target: Target,
) -> None:
    # SPEC 7: an org deleted on the command line leaves nothing to watch: each of its streams
    # ends, as a query of what it watched is answered, and completes
    agent = platform.agent(shared=True)["id"]
    sid = api.session(agent)["session"]["id"]
    live = sockets(server, platform.token).ack()
    live.subscribe("view", SESSION, id=sid)
    live.subscribe("agent", AGENT, id=agent)
    live.subscribe("runs", RUNS, id=sid)
    assert live.next("view")["data"]["memoryChanged"]["revision"] == 0
    assert live.next("agent")["data"]["agentMemoryChanged"]["version"] == 0

    env = {"NEO4J_URI": neo4j_target.uri, "NEO4J_PASSWORD": neo4j_target.password}
    deleted = run_cli("org", "delete", "--org", "acme", "--yes", env=env)
    assert deleted.returncode == 0, deleted.stderr

    for op in ("view", "agent", "runs"):
        ended = live.message(op)
        assert ended["type"] == "next", ended
        # (its token went with it: a socket hears that within the seconds a token is trusted,
        # and the watched object gone at once; either ends the stream)
        codes = [e["extensions"]["code"] for e in ended["payload"]["errors"]]
        assert codes in (["NOT_FOUND"], ["UNAUTHORIZED"]), ended
        assert live.message(op) == {"id": op, "type": "complete"}


def test_each_operation_a_socket_carries_reads_the_graph_anew(
    api: Api, member: Api, platform: Api, server: RunningServer,
    sockets: Callable[..., Socket],
) -> None:
    # Queries and mutations on one socket answer the graph as it is when each runs, as they
    # do over HTTP: a change the socket made, or another client's, is seen by the next one;
    # a deleted session is gone from it (SPEC 7), and an erased person's private agent entry
    # leaves the agent memory a service's socket reads (A9)
    query = ("query($id: ID!) { session(id: $id) { revision head "
             "memory { entries { nodes { key content } } } } }")
    agent = platform.agent("shared planner", shared=True)["id"]
    sid = api.session(api.agent("a")["id"])["session"]["id"]
    socket = sockets(server, api.token).ack()

    def ask(op: str, document: str, **variables: Any) -> dict[str, Any]:
        socket.subscribe(op, document, **variables)
        answer = socket.next(op)
        assert socket.message(op) == {"id": op, "type": "complete"}
        assert "errors" not in answer, answer
        data: dict[str, Any] = answer["data"]
        return data

    first = ask("1", query, id=sid)["session"]
    assert first["revision"] == 0
    remembered = ask("2", "mutation($id: ID!, $head: String!) { remember(sessionId: $id, "
                     "expected: $head, revision: 0, key: \"seat\", content: \"Window.\", "
                     "kind: FACT) { revision } }", id=sid, head=first["head"])
    assert remembered["remember"]["revision"] == 1
    assert ask("3", query, id=sid)["session"]["revision"] == 1
    api.remember(sid, "car", "No rental car.")  # another client's change
    then = ask("4", query, id=sid)["session"]
    assert then["revision"] == 2
    assert sorted(e["key"] for e in then["memory"]["entries"]) == ["car", "seat"]
    api.ok(api.http.delete(f"/v1/sessions/{sid}"))
    assert ask("5", query, id=sid) == {"session": None}

    service = sockets(server, platform.token).ack()
    memory = ("query($id: ID!) { agent(id: $id) { memory { version "
              "entries { nodes { key about } } } } }")
    member.session(agent)  # ben is a member who talked to the agent
    agent_remember(platform, agent, "back", "Ben has a bad back.", about="ben",
                   visibility="private")
    service.subscribe("a", memory, id=agent)
    before = service.next("a")["data"]["agent"]["memory"]
    assert [e["about"] for e in before["entries"]] == ["ben"]
    assert service.message("a")["type"] == "complete"
    platform.ok(platform.post("/v1/org/persons/ben/erase"))
    service.subscribe("b", memory, id=agent)
    after = service.next("b")["data"]["agent"]["memory"]
    assert after["entries"] == []
    assert after["version"] > before["version"]


def test_a_message_over_the_body_limit_closes_the_served_socket(
    neo4j_target: Target, openai_stub: OpenAIStub, tmp_path: Path,
    tokens: Callable[[str, str], str],
) -> None:
    # `openbot-memory serve` holds a socket's messages to the limit of a request body: a
    # GraphQL document sent by socket is no larger than one sent by POST
    served = Service(neo4j_target, openai_stub, tmp_path / "service.log",
                     env={"OPENBOT_MEMORY_MAX_BODY_BYTES": "65536"})
    served.start()
    try:
        def socket() -> ClientConnection:
            return connect(served.url.replace("http://", "ws://") + "/graphql",
                           subprotocols=[Subprotocol("graphql-transport-ws")],
                           open_timeout=WAIT)

        signed = {"Authorization": f"Bearer {tokens('acme', 'ana')}"}
        with socket() as ws:  # within the limit: the socket signs in
            ws.send(json.dumps({"type": "connection_init",
                                "payload": {**signed, "pad": "x" * 60_000}}))
            assert json.loads(ws.recv(timeout=WAIT))["type"] == "connection_ack"
        with socket() as ws:
            ws.send(json.dumps({"type": "connection_init",
                                "payload": {**signed, "pad": "x" * 70_000}}))
            with pytest.raises(ConnectionClosed) as closed:
                ws.recv(timeout=WAIT)
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == 1009  # message too big
    finally:
        served.stop()
