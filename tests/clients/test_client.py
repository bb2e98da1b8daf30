"""The blocking client, every method, against the real service (tests/conftest.py's server)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from openbot_memory_client import (
    KEEP,
    AgentConflict,
    AgentRemember,
    Forbidden,
    Forget,
    NotFound,
    OpenBotMemory,
    Refresh,
    Remember,
    SessionConflict,
    TurnItem,
    Unavailable,
    ValidationError,
)
from openbot_memory_client import models as m
from openbot_memory_client.core import BOOKMARK

from app.store.database import Target
from tests.conftest import Graph, RunningServer, make_token

FIRST_TURN: list[TurnItem | dict[str, Any]] = [
    TurnItem(id="c-1", role="user",
             content="Hi, my name is Ana. Our budget is 1500 EUR. I prefer window seats."),
    {"id": "c-2", "type": "message", "role": "assistant", "content": "Noted."},
]


def test_agents_sessions_and_their_pages(client: OpenBotMemory, graph: Graph) -> None:
    agent = client.create_agent("trip planner", shared=True, model="builtin")
    assert (agent.name, agent.shared, agent.model) == ("trip planner", True, "builtin")
    assert client.get_agent(agent.id) == agent
    others = [client.create_agent(f"agent {n}") for n in range(4)]
    listed = list(client.list_agents(page_size=2))  # three pages: 2, 2, 1
    assert [a.id for a in listed] == [agent.id, *(a.id for a in others)]

    views = [client.create_session(agent.id) for _ in range(3)]
    child = client.create_session(agent.id, kind="subagent", parent=views[0].session.id)
    assert (child.session.kind, child.session.parent) == ("subagent", views[0].session.id)
    assert views[0].session.revision == 0
    assert views[0].memory.entries == {}
    assert views[0].session.person == "ana"
    assert client.get_session(views[1].session.id) == views[1]
    assert client.memory(views[1].session.id) == views[1].memory
    ids = [v.session.id for v in client.list_sessions(agent=agent.id, page_size=3)]
    assert ids == [*(v.session.id for v in views), child.session.id]
    assert len(list(client.list_sessions(page_size=1))) == 4


def test_turns_instructions_and_runs(client: OpenBotMemory, graph: Graph) -> None:
    agent = client.create_agent("trip planner")
    sid = client.create_session(agent.id).session.id

    recorded = client.record_turn(sid, FIRST_TURN, wait=30)
    assert recorded.turn.items == ["c-1", "c-2"]
    assert recorded.run is not None
    assert recorded.run.status == "succeeded"
    again = client.record_turn(sid, FIRST_TURN)  # a retry with the same ids: the same turn
    assert again.turn.id == recorded.turn.id
    assert again.run is None
    assert client.get_turn(sid, recorded.turn.id).turn == again.turn

    memory = client.memory(sid)
    assert sorted(memory.entries) == ["budget", "prefers-window-seats", "user-name"]
    assert memory.processed == ["c-1", "c-2"]
    shown = client.instructions(sid)
    assert sorted(shown.included.session) == ["budget", "prefers-window-seats", "user-name"]
    assert "1500 EUR" in shown.memory

    runs = client.runs(sid)
    assert [run.id for run in runs] == [recorded.run.id]
    run = client.get_run(sid, recorded.run.id, wait=5)
    assert run.finished
    assert run.read == ["c-1", "c-2"]
    assert run.session == sid

    waiting = client.record_turn(
        sid, [TurnItem(id="c-3", role="user", content="Book it?"),
              TurnItem(id="c-4", type="approval", role="assistant", content="Approve?")],
        status="awaiting_approval")
    assert waiting.turn.status == "awaiting_approval"
    done = client.complete_turn(sid, waiting.turn.id,
                                [TurnItem(id="c-5", role="assistant", content="Booked.")])
    assert done.turn.status == "completed"
    assert done.turn.items[-1] == "c-5"


def test_session_memory_commands_send_what_the_client_last_saw(
    client: OpenBotMemory, clients: Callable[[str], OpenBotMemory], ana_token: str,
    graph: Graph,
) -> None:
    sid = client.create_session(client.create_agent("a").id).session.id
    view = client.remember(sid, "budget", "The trip budget is 1500 EUR.")
    assert view.memory.entries["budget"].status == "active"
    assert view.session.revision == 1
    view = client.remember(sid, "seat", "Ana prefers window seats.", "preference")
    assert view.memory.entries["seat"].kind == "preference"
    view = client.forget(sid, "budget")
    assert view.memory.entries["budget"].status == "retracted"
    view = client.configure(sid, use=False)
    assert view.memory.overrides.use is False
    assert view.memory.settings.use is False
    view = client.configure(sid, generate=False)  # `use` is kept
    assert (view.memory.overrides.use, view.memory.overrides.generate) == (False, False)
    view = client.configure(sid, use=None, generate=KEEP)  # back to the org's `use`
    assert (view.memory.overrides.use, view.memory.overrides.generate) == (None, False)
    view = client.refresh(sid)
    assert view.session.id == sid

    # Another client moves the session: a head and revision given that are stale now are
    # a conflict, and nothing changed.
    other = clients(ana_token)
    other.remember(sid, "hotel", "The hotel is near the station.")
    with pytest.raises(SessionConflict) as stale:
        client.remember(sid, "car", "No rental car.", expected=view.session.head,
                        revision=view.session.revision)
    assert stale.value.request_id
    assert stale.value.status == 409
    fresh = client.get_session(sid)
    assert "car" not in fresh.memory.entries
    view = client.command(sid, Remember(key="car", content="No rental car."),
                          expected=fresh.session.head, revision=fresh.session.revision)
    assert sorted(view.memory.entries) == ["budget", "car", "hotel", "seat"]

    # `update` reads, applies the function and sends it at what it read.
    view = client.update(sid, lambda now: Forget(key="car") if "car" in now.memory.entries
                         else None)
    assert view.memory.entries["car"].status == "retracted"
    unchanged = client.update(sid, lambda now: None)
    assert unchanged.session.revision == view.session.revision


def test_versions_fork_revert_and_promote(client: OpenBotMemory, graph: Graph) -> None:
    agent = client.create_agent("a")
    parent = client.create_session(agent.id).session.id
    sid = client.create_session(agent.id, kind="subagent", parent=parent).session.id
    first = client.remember(sid, "checkin", "Check in online.", "procedure").session.head
    client.remember(sid, "budget", "The trip budget is 1500 EUR.")

    versions = client.versions(sid)
    assert [v.id for v in versions][-2:] == [first, client.get_session(sid).session.head]
    assert versions[-1].current
    old = client.version(sid, first)
    assert sorted(old.memory.entries) == ["checkin"]
    assert old.version.id == first

    forked = client.fork(sid, at=first)
    assert forked.session.forked_from == sid
    assert sorted(forked.memory.entries) == ["checkin"]
    reverted = client.revert(sid, first)
    assert sorted(reverted.memory.entries) == ["checkin"]
    assert reverted.session.revision == 3

    promoted = client.promote(sid, name="check-in helper")
    assert promoted.agent.name == "check-in helper"
    assert sorted(promoted.memory.entries) == ["checkin"]
    assert promoted.memory.version == 1


def test_org_settings(client: OpenBotMemory, graph: Graph) -> None:
    before = client.org_settings()
    assert before.memory.use
    assert before.agent_memory
    after = client.update_org_settings(generate=False, agent_memory=False)
    assert (after.memory.use, after.memory.generate, after.agent_memory) == (True, False, False)
    assert after.helper_model == before.helper_model
    back = client.update_org_settings(generate=None, agent_memory=None, model="builtin")
    assert (back.memory.generate, back.agent_memory, back.model) == (True, True, "builtin")
    assert client.org_settings() == back


def test_agent_memory_log_learning_and_search(
    client: OpenBotMemory, server: RunningServer, graph: Graph
) -> None:
    agent = client.create_agent("travel desk", shared=True)
    assert client.agent_memory(agent.id) == m.AgentMemory(entries={}, version=0)
    memory = client.remember_for_agent(agent.id, "refundable-fares",
                                       "Book refundable fares only.", "procedure")
    assert memory.version == 1
    memory = client.remember_for_agent(agent.id, "seat", "Ana prefers window seats.",
                                       "preference", about="ana", visibility="private")
    # a private entry is listed as key@person; `about` names it
    assert (memory.version, memory.entries["seat@ana"].visibility) == (2, "private")
    memory = client.forget_for_agent(agent.id, "seat", about="ana")
    assert memory.entries["seat@ana"].status == "retracted"
    memory = client.agent_command(
        agent.id, AgentRemember(key="meals", content="No meals.", kind="decision"),
        expected=3)
    assert memory.version == 4
    log = list(client.agent_log(agent.id, page_size=3))
    assert [(e.version, e.maker, e.person) for e in log] == [
        (n, "person", "ana") for n in range(1, 5)]
    assert [e.version for e in client.agent_log(agent.id, after=2)] == [3, 4]

    sid = client.create_session(agent.id).session.id
    client.record_turn(sid, [TurnItem(role="user", content="Always book trains before flights.")],
                       wait=30)
    jobs = _learned(client, agent.id)
    assert jobs[0].status == "succeeded"
    assert jobs[0].model == "builtin"
    assert "procedure-always-book-trains-before" in client.agent_memory(agent.id).entries

    client.get_session(sid)  # the run moved the revision past what the turn answered
    client.remember(sid, "budget", "The trip budget is 1500 EUR.")
    hits = client.search("budget", session=sid)
    assert [(h.entry.key, h.entry.session) for h in hits] == [("budget", sid)]
    assert "**budget**" in hits[0].snippet
    assert client.search("budget", session=sid, offset=1) == []
    agent_hits = client.search("refundable", agent=agent.id, limit=5)
    assert [(h.entry.key, h.entry.agent) for h in agent_hits] == [
        ("refundable-fares", agent.id)]


def _learned(client: OpenBotMemory, agent_id: str) -> list[m.LearningJob]:
    deadline = time.monotonic() + 30
    while True:
        jobs = client.learning_jobs(agent_id)
        if (jobs and all(job.finished for job in jobs)) or time.monotonic() > deadline:
            return jobs
        time.sleep(0.1)


def test_graphql(client: OpenBotMemory, graph: Graph) -> None:
    sid = client.create_session(client.create_agent("a").id).session.id
    client.remember(sid, "budget", "The trip budget is 1500 EUR.")
    data = client.graphql(
        "query($id: ID!) { session(id: $id) { revision memory { entries { nodes { key } } } } }",
        {"id": sid})
    assert data == {"session": {"revision": 1,
                                "memory": {"entries": {"nodes": [{"key": "budget"}]}}}}


def test_the_client_sends_back_the_bookmark_of_its_last_write(
    server: RunningServer, ana_token: str, graph: Graph
) -> None:
    # Read-your-writes across replicas: each answer that wrote carries `OpenBot-Bookmark`, and
    # one client instance (one causal chain) sends the last one it was given with each request.
    sent: list[tuple[str, str | None]] = []
    received: list[str | None] = []

    def request(r: httpx.Request) -> None:
        sent.append((f"{r.method} {r.url.path}", r.headers.get(BOOKMARK)))

    def response(r: httpx.Response) -> None:
        received.append(r.headers.get(BOOKMARK))

    hooks: dict[str, list[Callable[..., Any]]] = {"request": [request], "response": [response]}
    with httpx.Client(event_hooks=hooks, timeout=60) as http, \
            OpenBotMemory(server.url, ana_token, http_client=http) as client:
        agent = client.create_agent("trip planner")
        client.get_agent(agent.id)
        view = client.create_session(agent.id)
        client.remember(view.session.id, "seat", "Window.")
        assert client.get_session(view.session.id).memory.entries["seat"].content == "Window."
        wrote, _, started, remembered, _ = received
        assert wrote is not None  # each write's answer carries a bookmark
        assert started is not None
        assert remembered is not None
        assert len({wrote, started, remembered}) == 3
        # each request sends the last bookmark the client was given (a read's answer gives
        # none, unless the token's last use was recorded then)
        given = [next((b for b in reversed(received[:n]) if b), None) for n in range(5)]
        assert given[4] == remembered
        assert sent == list(zip([
            "POST /v1/agents", f"GET /v1/agents/{agent.id}", "POST /v1/sessions",
            f"POST /v1/sessions/{view.session.id}/memory", f"GET /v1/sessions/{view.session.id}",
        ], given, strict=True))
    # another client is a chain of its own: it starts with none
    with httpx.Client(event_hooks=hooks, timeout=60) as http, \
            OpenBotMemory(server.url, ana_token, http_client=http) as other:
        other.get_agent(agent.id)
    assert sent[-1] == (f"GET /v1/agents/{agent.id}", None)


def test_the_bookmarks_an_answer_gives_replace_those_its_request_sent() -> None:
    # Read-your-writes across replicas: an answer gives a bookmark for each write of its
    # request (comma-separated); the client sends each back in place of those the request
    # sent, and at most the 8 a request may send
    many = [f"FB:c{n}" for n in range(9)]
    given = iter(["FB:a1, FB:a2", "FB:b", ",".join(many), ""])
    sent: list[str | None] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request.headers.get(BOOKMARK))
        agent = {"id": "agt-1", "name": "a", "shared": False, "model": None}
        return httpx.Response(200, json=agent, headers={BOOKMARK: next(given)})

    with httpx.Client(transport=httpx.MockTransport(answer)) as http, \
            OpenBotMemory("http://memory.test", "token", http_client=http) as client:
        for _ in range(4):
            client.get_agent("agt-1")
    assert sent == [None, "FB:a1,FB:a2", "FB:b", ",".join(many[1:])]


def test_a_call_that_waits_on_the_service_is_given_as_long_as_the_service_waits() -> None:
    # a Refresh is answered once its run has ended (up to 120 s on the service), a `wait=S`
    # call after S seconds: each is sent with at least that long, and never with less than
    # the client's own timeout
    timeouts: list[float | None] = []
    connects: set[float | None] = set()

    def answer(request: httpx.Request) -> httpx.Response:
        timeouts.append(request.extensions["timeout"]["read"])
        connects.add(request.extensions["timeout"]["connect"])
        return httpx.Response(404, json={"_tag": "NotFound", "message": "no session"})

    for client_timeout in (httpx.Timeout(30.0, connect=5.0), httpx.Timeout(300.0)):
        with httpx.Client(transport=httpx.MockTransport(answer), timeout=client_timeout) as http, \
                OpenBotMemory("http://memory.test", "token", http_client=http) as client:
            for call in (lambda: client.refresh("ses-1", expected="v-1", revision=1),
                         lambda: client.get_run("ses-1", "run-1", wait=1),
                         lambda: client.get_run("ses-1", "run-1", wait=60)):
                with pytest.raises(NotFound):
                    call()
    assert timeouts == [130.0, 30.0, 70.0, 300.0, 300.0, 300.0]
    assert connects == {5.0, 300.0}  # the client's own, whatever the call waits for


def test_bookmarks_the_service_refuses_are_forgotten_and_the_request_sent_once_more() -> None:
    # a client that outlives its service's database (made anew) holds bookmarks no service
    # gave: the 400 on OpenBot-Bookmark ran nothing, so the client forgets them and sends the
    # request again without them, once; a refusal of anything else is raised as it is
    sent: list[str | None] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request.headers.get(BOOKMARK))
        graphql = request.url.path == "/graphql"
        if request.headers.get(BOOKMARK) and graphql:  # GraphQL answers an error in a 200
            return httpx.Response(200, json={"data": None, "errors": [{
                "message": "not a bookmark this service gave",
                "extensions": {"code": "VALIDATION_ERROR", "field": BOOKMARK}}]})
        if request.headers.get(BOOKMARK):
            return httpx.Response(400, json={"_tag": "ValidationError", "field": BOOKMARK,
                                             "message": "not a bookmark this service gave"})
        if graphql:
            return httpx.Response(200, json={"data": {"agents": {"nodes": []}}})
        if request.url.path.endswith("agt-2"):
            return httpx.Response(400, json={"_tag": "ValidationError", "field": "id",
                                             "message": "bad id"})
        return httpx.Response(200, json={"id": "agt-1", "name": "a", "shared": False,
                                         "model": None})

    with httpx.Client(transport=httpx.MockTransport(answer)) as http, \
            OpenBotMemory("http://memory.test", "token", http_client=http) as client:
        client.core.bookmarks = ("FB:old",)
        assert client.get_agent("agt-1").id == "agt-1"
        assert sent == ["FB:old", None]
        assert len(client.core.bookmarks) == 0  # forgotten
        client.core.bookmarks = ("FB:old",)
        with pytest.raises(ValidationError):
            client.get_agent("agt-2")
        client.core.bookmarks = ("FB:old",)
        assert client.graphql("{ agents { nodes { id } } }") == {"agents": {"nodes": []}}
    assert sent == ["FB:old", None, "FB:old", None, "FB:old", None]


def test_a_command_after_a_turn_that_waited_for_its_run_is_sent_at_the_session_after_it(
    client: OpenBotMemory, graph: Graph,
) -> None:
    # S7: the run a turn queued moves the session past what the turn's answer says; a turn
    # answered with its run (`wait`) leaves the client to read the session before its next
    # command, so the command is not refused as stale
    sid = client.create_session(client.create_agent("a").id).session.id
    turn = client.record_turn(sid, FIRST_TURN, wait=30)
    assert turn.run is not None
    assert turn.run.status == "succeeded"
    after_run = graph.value("MATCH (s:Session {id: $sid}) RETURN s.revision", sid=sid)
    assert after_run > turn.session.revision
    view = client.remember(sid, "car", "No rental car.")
    assert view.session.revision == after_run + 1
    assert view.memory.entries["car"].status == "active"


def test_reading_a_turn_or_sending_it_again_leaves_commands_at_the_session_as_it_is(
    client: OpenBotMemory, server: RunningServer, ana_token: str, graph: Graph,
) -> None:
    # S7: a turn's answer is the session as that turn left it; read later (or answered to a
    # retry, 200) it is not the session now, so the next command is not sent at it
    sid = client.create_session(client.create_agent("a").id).session.id
    turn = client.record_turn(sid, FIRST_TURN, wait=30)
    assert turn.run is not None
    assert client.get_turn(sid, turn.turn.id).session.revision == turn.session.revision
    now = graph.value("MATCH (s:Session {id: $sid}) RETURN s.revision", sid=sid)
    assert now > turn.session.revision  # the run moved the session since
    view = client.remember(sid, "car", "No rental car.")
    assert view.session.revision == now + 1
    with OpenBotMemory(server.url, ana_token) as fresh:  # a client that knows nothing yet
        again = fresh.record_turn(sid, FIRST_TURN)  # the same items: the same turn, 200
        assert again.turn.id == turn.turn.id
        fresh.get_turn(sid, turn.turn.id)
        assert fresh.forget(sid, "car").session.revision == now + 2


def test_a_command_after_a_turn_lands_though_another_writer_moved_the_session(
    client: OpenBotMemory, server: RunningServer, ana_token: str, graph: Graph,
) -> None:
    # S12: without expected and revision a command goes at the head and revision the client
    # last saw, here those of the turn it just recorded. Another writer moved the session
    # since (as a turn's consolidation run does): the command lands, sent once more at the
    # session read again. A stale pair the caller gave is the caller's SessionConflict
    sid = client.create_session(client.create_agent("a").id).session.id
    client.configure(sid, generate=False)  # no consolidation run: only the racer moves it
    turn = client.record_turn(sid, [TurnItem(id="t-1", role="user", content="Hello.")])
    with OpenBotMemory(server.url, ana_token) as racer:
        racer.remember(sid, "car", "No rental car.")
        view = client.remember(sid, "seat", "Window.", "preference")
        assert sorted(view.memory.entries) == ["car", "seat"]
        racer.remember(sid, "hotel", "Near the station.")
        view = client.forget(sid, "car")
        assert view.memory.entries["car"].status == "retracted"
        racer.remember(sid, "meals", "No meals.")
        view = client.configure(sid, use=False)
        assert view.memory.overrides.use is False
    assert view.session.revision == turn.session.revision + 6

    with pytest.raises(SessionConflict) as stale:
        client.remember(sid, "seat", "Aisle.", expected=turn.session.head,
                        revision=turn.session.revision)
    assert stale.value.status == 409
    # a conflict reading again does not explain (a key the memory lacks) is raised
    with pytest.raises(SessionConflict, match="no key"):
        client.forget(sid, "nothing-here")
    now = client.get_session(sid)
    assert (now.memory.entries["seat"].content, now.session.revision) == (
        "Window.", view.session.revision)


def test_a_completion_sent_again_leaves_commands_at_the_session_as_it_is(
    client: OpenBotMemory, server: RunningServer, ana_token: str,
) -> None:
    # S7: a completion is answered 200 whether or not it is a retry, so its answer does not
    # stand for the session now: a retry's is the session as the first completion left it
    sid = client.create_session(client.create_agent("a").id).session.id
    turn = client.record_turn(sid, [TurnItem(id="q-1", role="user", content="Book it?")],
                              status="awaiting_approval")
    done = [TurnItem(id="q-2", role="assistant", content="Booked.")]
    first = client.complete_turn(sid, turn.turn.id, done)
    for run in client.runs(sid):  # the completion's consolidation moves the session too
        assert client.get_run(sid, run.id, wait=30).status == "succeeded"
    moved = client.remember(sid, "seat", "Window.").session.revision
    with OpenBotMemory(server.url, ana_token) as fresh:
        again = fresh.complete_turn(sid, turn.turn.id, done)
        assert again.session.revision == first.session.revision < moved
        assert fresh.forget(sid, "seat").session.revision == moved + 1


def test_an_agent_conflict_leaves_the_next_command_to_read_the_memory_first(
    client: OpenBotMemory, server: RunningServer, ana_token: str,
) -> None:
    # A10: an AgentConflict says the version the client sent is stale; the next command is
    # sent at the memory read again
    agent = client.create_agent("a", shared=True).id
    client.remember_for_agent(agent, "seat", "Aisle.", "preference")
    with OpenBotMemory(server.url, ana_token) as racer:
        racer.remember_for_agent(agent, "car", "No rental car.", "decision")
    with pytest.raises(AgentConflict):
        client.remember_for_agent(agent, "seat", "Window.", "preference")
    memory = client.remember_for_agent(agent, "seat", "Window.", "preference")
    assert (memory.version, memory.entries["seat"].content) == (3, "Window.")


def test_expected_and_revision_are_given_together_or_not_at_all(
    client: OpenBotMemory, graph: Graph,
) -> None:
    # S12: a command is checked against the head and revision together; one of them alone is
    # refused before anything is sent, not replaced by what the client last saw
    sid = client.create_session(client.create_agent("a").id).session.id
    seen = client.remember(sid, "seat", "Aisle.").session
    for given in ({"expected": seen.head}, {"revision": seen.revision}):
        with pytest.raises(ValueError, match="together"):
            client.remember(sid, "seat", "Window.", **given)
        with pytest.raises(ValueError, match="together"):
            client.revert(sid, seen.head, **given)
    assert graph.value("MATCH (s:Session {id: $sid}) RETURN s.revision", sid=sid) == (
        seen.revision)
    view = client.remember(sid, "seat", "Window.", expected=seen.head, revision=seen.revision)
    assert view.memory.entries["seat"].content == "Window."


def test_an_unavailable_service_tells_how_long_to_wait_once_the_retries_are_spent() -> None:
    # the service answers 503 with Retry-After; the client waits and sends again `retries`
    # times, then raises Unavailable carrying the wait the service asked for
    sent: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request.url.path)
        body = {"_tag": "Unavailable", "message": "the database does not answer"}
        return httpx.Response(503, json=body, headers={"Retry-After": "7"})

    with httpx.Client(transport=httpx.MockTransport(answer)) as http, \
            OpenBotMemory("http://memory.test", "token", http_client=http, retries=0) as client, \
            pytest.raises(Unavailable) as raised:
        client.get_agent("agt-1")
    assert (raised.value.status, raised.value.retry_after) == (503, 7.0)
    assert sent == ["/v1/agents/agt-1"]


def test_a_503_sends_again_only_a_call_whose_repeat_cannot_write_twice() -> None:
    # A 503 may answer a write that committed (the connection lost during the commit, or the
    # wait for a turn's run): a read (a GraphQL query too), or a turn or completion whose items
    # all carry ids (sent again, the same turn), is sent again; one without ids, a new agent,
    # a session or a GraphQL mutation, once
    sent: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(f"{request.method} {request.url.path}")
        body = {"_tag": "Unavailable", "message": "the database does not answer"}
        return httpx.Response(503, json=body, headers={"Retry-After": "0"})

    calls: list[Callable[[OpenBotMemory], object]] = [
        lambda c: c.get_agent("agt-1"),
        lambda c: c.record_turn("ses-1", [TurnItem(id="u-1", role="user", content="Hi.")]),
        lambda c: c.record_turn("ses-1", [TurnItem(role="user", content="Hi.")]),
        lambda c: c.create_agent("a"),
        lambda c: c.create_session("agt-1"),
        lambda c: c.complete_turn("ses-1", "t-1", [TurnItem(id="a-1", role="assistant",
                                                            content="Done.")]),
        lambda c: c.complete_turn("ses-1", "t-1", [TurnItem(role="assistant", content="Done.")]),
        lambda c: c.graphql("query { agents { nodes { id } } }"),
        lambda c: c.graphql('mutation { createAgent(name: "a") { id } }'),
    ]
    counts = []
    with httpx.Client(transport=httpx.MockTransport(answer)) as http, \
            OpenBotMemory("http://memory.test", "token", http_client=http, retries=2) as client:
        for call in calls:
            sent.clear()
            with pytest.raises(Unavailable):
                call(client)
            counts.append(len(sent))
    assert counts == [3, 3, 1, 1, 1, 3, 1, 3, 1]


def test_a_refresh_that_conflicts_is_not_sent_again(
    server: RunningServer, ana_token: str,
) -> None:
    # a Refresh's conflict is its run still going or no model to run: sent again, even where
    # the session moved since the client last read it, it would queue another run
    posted: list[str] = []

    def heard(request: httpx.Request) -> None:
        if request.method == "POST" and request.url.path.endswith("/memory"):
            posted.append(request.url.path)

    with httpx.Client(timeout=60, event_hooks={"request": [heard]}) as http, \
            OpenBotMemory(server.url, ana_token, http_client=http) as client, \
            OpenBotMemory(server.url, ana_token) as racer:
        client.update_org_settings(model=None)
        sid = client.create_session(client.create_agent("a").id).session.id
        racer.remember(sid, "seat", "Window.")  # the session moves past what client saw
        with pytest.raises(SessionConflict) as refused:
            client.refresh(sid)
        assert "no model" in refused.value.message
        assert len(posted) == 1
        with pytest.raises(SessionConflict):
            client.update(sid, lambda view: Refresh())
        assert len(posted) == 2


def test_update_raises_a_conflict_that_reading_again_does_not_mend_at_once(
    server: RunningServer, ana_token: str,
) -> None:
    sent: list[str] = []

    def heard(request: httpx.Request) -> None:
        sent.append(request.method)

    with httpx.Client(timeout=60, event_hooks={"request": [heard]}) as http, \
            OpenBotMemory(server.url, ana_token, http_client=http) as client, \
            OpenBotMemory(server.url, ana_token) as racer:
        sid = client.create_session(client.create_agent("a").id).session.id
        sent.clear()
        # forgetting a key the memory does not have conflicts at any revision: the session
        # read again is the one the command was sent at, so no retry can land it
        with pytest.raises(SessionConflict) as conflict:
            client.update(sid, lambda view: Forget(key="nothing-here"))
        assert "no key" in conflict.value.message
        assert sent == ["GET", "POST", "GET"]
        # a conflict from a writer that moved the session is still retried
        moved: list[int] = []

        def once(view: m.SessionView) -> Remember:
            if not moved:
                moved.append(racer.remember(sid, "seat", "Window.").session.revision)
            return Remember(key="car", content="No rental car.")

        assert sorted(client.update(sid, once).memory.entries) == ["car", "seat"]


def test_a_session_deleted_and_a_person_erased_through_the_client(
    client: OpenBotMemory, server: RunningServer, neo4j_target: Target, graph: Graph,
) -> None:
    service_token = make_token(neo4j_target, "acme", None, service="platform")
    agent = client.create_agent("a").id
    sid = client.create_session(agent).session.id
    assert client.delete_session(sid) == sid
    with pytest.raises(NotFound):
        client.get_session(sid)
    kept = client.create_session(agent).session.id
    client.remember(kept, "seat", "Ana prefers window seats.")
    with OpenBotMemory(server.url, service_token) as platform:
        with pytest.raises(Forbidden):
            client.erasures()  # a person's token
        erasure = platform.erase_person("ana")
        assert erasure.person == "ana"
        assert erasure.counts.entries == 1
        assert platform.erasures() == [erasure]
        with pytest.raises(NotFound):
            platform.get_session(kept)
