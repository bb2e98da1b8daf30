"""How many statements each hot path costs, read from the spans of a served app, and
that each answer is what a fresh read shows."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from app.store.database import Target
from tests.conftest import Api, Graph, RunningServer, claims_nothing, make_token, user
from tests.tracing import finished_spans, statements_of, traced

__all__ = ["traced"]  # the fixture, found here by pytest


@dataclass
class Two:
    """Ana's clients of two servers on the same graph: `here`, whose statements `exporter`
    records, and `there`, which makes changes elsewhere."""

    here: Api
    there: Api
    exporter: InMemorySpanExporter
    servers: tuple[RunningServer, RunningServer]


@pytest.fixture
def two(
    traced: tuple[RunningServer, InMemorySpanExporter], neo4j_target: Target,
    server: RunningServer,
) -> Iterator[Two]:
    (mine, exporter), token = traced, make_token(neo4j_target, "acme", "ana")
    here, there = Api(mine.url, token), Api(server.url, token)
    yield Two(here, there, exporter, (mine, server))
    for client in (here, there):
        client.http.close()


def test_a_memory_command_is_one_statement_unless_it_is_refused(
    traced: tuple[RunningServer, InMemorySpanExporter], neo4j_target: Target,
    server: RunningServer,
) -> None:
    # A Remember, Forget or Configure is one statement (lock, check, write; made at the
    # revision of the view read before it, what it wrote makes the view after it);
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
    # each at the revision of the view read just before it: none reads the view
    assert statements == [
        ["take_session_lock+record_memory_edit"],
        ["take_session_lock+record_memory_edit"],
        ["configure_session"],
        ["configure_session+session_views", "lock_session"],
    ]


def test_a_configure_on_the_view_answered_here_is_one_statement_and_answers_a_fresh_read(
    two: Two,
) -> None:
    # A Configure made at the revision of the view this server last answered changes
    # no entry, so it answers that view with its own row (S4: the switches as resolved with the
    # org's settings now, S15: the revision after it). A change made elsewhere (the other server)
    # moves the revision, so the next Configure reads the view again; the org's settings move no
    # revision and come with the Configure's row.
    here, there, exporter = two.here, two.there, two.exporter
    with claims_nothing(*two.servers):
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
    statements = statements_of(spans, "POST /v1/sessions/{id}/memory")
    remember = "take_session_lock+record_memory_edit"  # at the revision of the view read before it
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


VIEW = """fragment View on Session { id head revision memory { processed
  settings { use generate } overrides { use generate }
  entries(first: 200) { nodes { key content kind status updatedAt
    sources { id type role content app author at seq turn { id } } } } } }"""

REMEMBER_HERE = VIEW + """
mutation($s: ID!, $e: String!, $r: Int!, $key: String!, $content: String!) {
  remember(sessionId: $s, expected: $e, revision: $r, key: $key, content: $content,
           kind: DECISION) { ...View } }"""

FORGET_HERE = VIEW + """
mutation($s: ID!, $e: String!, $r: Int!, $key: String!) {
  forget(sessionId: $s, expected: $e, revision: $r, key: $key) { ...View } }"""

READ_THERE = VIEW + """
query($s: ID!) { session(id: $s) { ...View } }"""


def test_a_forks_view_shows_its_sources_items_as_they_are_after_an_erasure_there(
    api: Api, graph: Graph
) -> None:
    # A fork's sources are its source session's items, which an erasure there (retention, a
    # deleted session) makes tombstones without moving the fork's revision: a command or read
    # of the fork answers them as they are now, never as a view kept before showed them
    sid = api.session()["session"]["id"]
    api.remember(sid, "budget", "The trip budget is 1500 EUR.")
    fork = api.ok(api.post(f"/v1/sessions/{sid}/fork", {}), 201)["session"]["id"]
    at = api.view(fork)["session"]
    done = api.graphql(REMEMBER_HERE, s=fork, e=at["head"], r=at["revision"], key="seat",
                       content="Window.")
    assert "errors" not in done, done
    answered = done["data"]["remember"]
    entries = {e["key"]: e for e in answered["memory"]["entries"]["nodes"]}
    [source] = entries["budget"]["sources"]
    assert "The trip budget is 1500 EUR." in source["content"]
    # the source session's item becomes a tombstone, as retention makes it
    graph.rows("MATCH (i:Item {id: $id, session: $s}) SET i.erased = true, i.content = null",
               id=source["id"], s=sid)

    done = api.graphql(REMEMBER_HERE, s=fork, e=answered["head"], r=answered["revision"],
                       key="seat", content="Aisle.")
    assert "errors" not in done, done
    entries = {e["key"]: e for e in done["data"]["remember"]["memory"]["entries"]["nodes"]}
    assert [s["content"] for s in entries["budget"]["sources"]] == [None]
    read = api.graphql(READ_THERE, s=fork)
    assert "errors" not in read, read
    entries = {e["key"]: e for e in read["data"]["session"]["memory"]["entries"]["nodes"]}
    assert [s["content"] for s in entries["budget"]["sources"]] == [None]

def test_a_remember_or_forget_on_the_view_answered_here_answers_what_a_fresh_read_shows(
    two: Two, graph: Graph
) -> None:
    # A Remember or Forget made at the revision of the view this server last answered
    # (read or answered) is one statement: it changes one entry (S13, S14), and answers what it
    # wrote, which with that view makes the view after it (S12, S17: the new head and
    # revision). Each answer is what a read right after it shows on the other server, JSON
    # body for body: a new key, a key again, a Forget, an entry learned from a turn replaced,
    # the org's settings changed elsewhere (S4: they move no revision). A change made elsewhere
    # (the other server, a write straight to the graph) moves the revision: the next command
    # reads the view, or, naming the revision before it, is refused (S12) and writes nothing.
    here, there, exporter = two.here, two.there, two.exporter
    sid = here.session()["session"]["id"]
    here.turn(sid, user("My name is Ana. Our budget is 1500 EUR."))
    here.wait_idle(sid)
    answer = here.view(sid)
    learned = answer["memory"]
    assert learned["processed"]  # the turn's items, and what was learned from them
    assert {"budget", "user-name"} <= set(learned["entries"])
    start = answer["session"]["revision"]

    answers: list[dict[str, Any]] = []
    fresh: list[dict[str, Any]] = []

    def post(command: dict[str, Any]) -> httpx.Response:
        at = answer["session"]
        return here.post(f"/v1/sessions/{sid}/memory", {
            "expected": at["head"], "revision": at["revision"], "command": command})

    def step(command: dict[str, Any]) -> None:
        nonlocal answer
        answer = here.ok(post(command))
        answers.append(answer)
        view = there.view(sid)
        assert there.ok(there.get(f"/v1/sessions/{sid}/memory")) == view["memory"]
        fresh.append(view)

    exporter.clear()
    with claims_nothing(*two.servers):
        step({"_tag": "Remember", "key": "seat", "content": "Window.", "kind": "preference"})
        step({"_tag": "Remember", "key": "hotel", "content": "Near the sea.", "kind": "fact"})
        step({"_tag": "Remember", "key": "seat", "content": "Aisle.", "kind": "decision"})
        step({"_tag": "Forget", "key": "hotel"})
        step({"_tag": "Remember", "key": "budget", "content": "2000 EUR.", "kind": "decision"})
        there.ok(there.patch("/v1/org/settings", {"memory": {"generate": False}}))
        step({"_tag": "Forget", "key": "user-name"})
        before = answer
        moved = there.remember(sid, "city", "Lisbon.")
        stale = post({"_tag": "Forget", "key": "seat"})
        assert stale.status_code == 409, stale.text
        assert stale.json()["_tag"] == "SessionConflict"
        assert there.view(sid) == moved
        answer = moved
        step({"_tag": "Forget", "key": "seat"})
        step({"_tag": "Remember", "key": "hotel", "content": "By the station.", "kind": "fact"})
        graph.rows("MATCH (s:Session {id: $id}) SET s.revision = s.revision + 1", id=sid)
        answer = there.view(sid)
        step({"_tag": "Remember", "key": "city", "content": "Porto.", "kind": "fact"})
        spans = finished_spans(exporter, "POST /v1/sessions/{id}/memory", count=10)

        # GraphQL's mutations answer the items too: the first reads its view (the one kept
        # here has none), the next are at its revision
        mutated = []
        at = answer["session"]
        for document, extra in ((REMEMBER_HERE, {"key": "dates", "content": "May."}),
                                (FORGET_HERE, {"key": "city"}),
                                (REMEMBER_HERE, {"key": "budget", "content": "2500 EUR."})):
            done = here.graphql(document, s=sid, e=at["head"], r=at["revision"], **extra)
            assert "errors" not in done, done
            at = done["data"]["remember" if document is REMEMBER_HERE else "forget"]
            read = there.graphql(READ_THERE, s=sid)
            assert "errors" not in read, read
            mutated.append((at, read["data"]["session"]))
        graphql = finished_spans(exporter, "POST /graphql", count=3)
    one = "take_session_lock+record_memory_edit"
    read = "lock_session+record_memory_edit+session_views"
    assert statements_of(spans, "POST /v1/sessions/{id}/memory") == [
        [one], [one], [one], [one], [one], [one],
        [one, "lock_session"],  # the revision before the Remember elsewhere: refused
        [read], [one],
        [read],  # the write straight to the graph moved the revision
    ]
    assert answers == fresh
    assert [sorted((k, e["status"]) for k, e in a["memory"]["entries"].items())
            for a in (answers[3], answers[-1])] == [
        [("budget", "active"), ("hotel", "retracted"), ("seat", "active"),
         ("user-name", "active")],
        [("budget", "active"), ("city", "active"), ("hotel", "active"), ("seat", "retracted"),
         ("user-name", "retracted")],
    ]
    assert answers[2]["memory"]["entries"]["seat"]["content"] == "Aisle."
    assert [a["memory"]["settings"]["generate"] for a in answers[4:6]] == [True, False]
    assert [a["session"]["revision"] for a in answers[:6]] == [start + n for n in range(1, 7)]
    assert before["session"]["revision"] == start + 6
    assert [s[0] for s in statements_of(graphql, "POST /graphql")] == [read, one, one]
    assert [answered for answered, _ in mutated] == [fresh for _, fresh in mutated]
    assert [{e["key"]: (e["status"], e["content"]) for e in answered["memory"]["entries"]["nodes"]
             if e["key"] in ("dates", "city", "budget")} for answered, _ in mutated] == [
        {"dates": ("ACTIVE", "May."), "city": ("ACTIVE", "Porto."),
         "budget": ("ACTIVE", "2000 EUR.")},
        {"dates": ("ACTIVE", "May."), "city": ("RETRACTED", "Porto."),
         "budget": ("ACTIVE", "2000 EUR.")},
        {"dates": ("ACTIVE", "May."), "city": ("RETRACTED", "Porto."),
         "budget": ("ACTIVE", "2500 EUR.")},
    ]


def test_a_turn_after_a_turn_here_is_one_statement_until_the_session_moves(
    two: Two, graph: Graph
) -> None:
    # A turn decides from what the last turn in this server left its session, and
    # records in one statement that locks and checks that the session is still so (one round
    # trip). A change made elsewhere (the other server) makes that statement write nothing: a
    # Remember (the revision moved), an agent's entry (its memory version moved), or the org's
    # settings (neither moved); the turn is then decided again under the lock. S5: each turn is
    # shown memory as it is when the turn starts, and is recorded once.
    here, there, exporter = two.here, two.there, two.exporter
    with claims_nothing(*two.servers):
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
    statements = statements_of(spans, "POST /v1/sessions/{id}/turns")
    lock, record = "lock_session+instruction_entries", "record_turn"
    once = "take_session_lock+record_turn"
    assert statements == [
        [lock, record],  # no turn here before: it decides from what the lock reads
        [once],
        [once, lock, record],  # the Remember moved the revision: decided again under the lock
        [once],
        [once, lock, record],  # the agent's entry moved its memory version
        [once, lock, record],  # the settings moved neither
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


def test_a_turn_that_queues_learning_after_a_turn_here_is_one_statement_and_the_queue(
    two: Two, graph: Graph
) -> None:
    # A2: a completed turn that queues no consolidation run (no model is set for the session,
    # its agent or its org) queues its agent's learning instead. Decided from what the last turn
    # here left the session, it is recorded by the one statement any such turn is, with the
    # learning queued in the same transaction; where that statement wrote nothing (a Remember
    # elsewhere moved the revision), the turn is decided again under the lock. Each turn is
    # recorded once, and the agent has learning queued.
    here, there, exporter = two.here, two.there, two.exporter
    with claims_nothing(*two.servers):
        there.ok(there.patch("/v1/org/settings", {"model": None}))
        agent = here.agent()["id"]
        sid = here.session(agent)["session"]["id"]
        answers = [here.turn(sid, user("Hello.")), here.turn(sid, user("Where to?"))]
        there.remember(sid, "seat", "Ana wants a window seat.")
        answers.append(here.turn(sid, user("Book it.")))
        spans = finished_spans(exporter, "POST /v1/sessions/{id}/turns", count=3)
        jobs = here.ok(here.get(f"/v1/agents/{agent}/learning"))["jobs"]
    statements = statements_of(spans, "POST /v1/sessions/{id}/turns")
    lock, record = "lock_session+instruction_entries", "record_turn"
    once, learn = "take_session_lock+record_turn", ["lock_agent", "queue_learning"]
    assert statements == [
        [lock, record, *learn],  # no turn here before: decided from what the lock reads
        [once, *learn],
        [once, lock, record, *learn],  # the Remember moved the revision: decided again
    ]
    assert [a.get("run") for a in answers] == [None, None, None]
    assert [job["status"] for job in jobs] == ["queued"]
    turns = graph.rows(
        "MATCH (t:Turn)-[:IN_SESSION]->(:Session {id: $id}) "
        "RETURN t.id AS id, t.revision AS revision ORDER BY t.revision", id=sid)
    assert [(t["id"], t["revision"]) for t in turns] == [
        (a["turn"]["id"], a["session"]["revision"]) for a in answers
    ]


def test_a_turn_with_client_ids_reads_the_branch_once_under_the_lock(two: Two) -> None:
    # A turn whose client chose item ids is decided under the lock. One read of the branch says
    # which of its ids are there already (a retry, or a conflict), and, where a client chose
    # ids before in the session, which of the next ids `i-NN` a client took: an item sent
    # without an id skips one that is taken.
    here, exporter = two.here, two.exporter
    with claims_nothing(*two.servers):
        sid = here.session()["session"]["id"]
        here.turn(sid, user("Hello.", id="i-02"))
        second = here.turn(sid, user("Book it."), user("Thanks.", id="m-2"))
        again = here.post(f"/v1/sessions/{sid}/turns", {"items": [user("Hi.", id="m-2")]})
        spans = finished_spans(exporter, "POST /v1/sessions/{id}/turns", count=3)
    assert again.status_code == 409, again.text
    assert again.json()["_tag"] == "SessionConflict"
    generated, chosen = second["turn"]["items"]
    assert generated.startswith("i-02-")
    assert chosen == "m-2"
    lock = "lock_session+instruction_entries"
    assert statements_of(spans, "POST /v1/sessions/{id}/turns") == [
        [lock, "branch_item_ids", "record_turn"],
        [lock, "branch_item_ids", "record_turn"],
        [lock, "branch_item_ids", "turn_view"],  # m-2 is taken: the turn it came in
    ]


def head_items(graph: Graph, sid: str) -> list[str]:
    """The ids of the items on the session's head, in order."""
    return [row["id"] for row in graph.rows(
        "MATCH (:Session {id: $id})-[:HEAD]->(:Version)-[:PARENT*0..]->(:Version)-[:ADDS]->(i)"
        " RETURN i.id AS id ORDER BY i.seq", id=sid)]


NESTED = """query Nested($id: ID!) {
  session(id: $id) { id head revision memory { settings { use generate }
    entries(first: 200) { nodes { key content
      sources { id content turn { id status at } } } } } } }"""


def test_a_nested_view_of_a_session_that_did_not_move_is_one_small_statement(
    two: Two, neo4j_target: Target
) -> None:
    # A nested view (session -> entries -> sources -> turn) of a session whose head
    # and revision did not move since this server last answered it is answered from that view,
    # after one small statement that says so (session_marks), with the org's settings as they
    # are now (S4). A change made elsewhere moves the revision (S15), so the view is read again.
    # A fork's sources cite its parent's turns, which can change without moving the fork's
    # revision: its view is read each time. Whom the caller may not reach stays unreached.
    here, there, exporter = two.here, two.there, two.exporter
    other = Api(two.servers[0].url, make_token(neo4j_target, "acme", "bo"))
    sid = here.session()["session"]["id"]
    here.turn(sid, user("My name is Ana. Our budget is 1500 EUR."))
    here.wait_idle(sid)

    def nested(client: Api, session_id: str = sid) -> Any:
        answer = client.graphql(NESTED, id=session_id)
        assert "errors" not in answer, answer
        return answer["data"]["session"]

    with claims_nothing(*two.servers):
        answers = [nested(here), nested(here)]
        there.remember(sid, "seat", "Ana wants a window seat.")
        answers += [nested(here), nested(here)]
        fresh = [nested(there)]
        there.ok(there.patch("/v1/org/settings", {"memory": {"generate": False}}))
        answers.append(nested(here))
        fresh.append(nested(there))
        there.turn(sid, user("Hello again."))
        answers.append(nested(here))
        fresh.append(nested(there))
        unreached = nested(other)
        forked = here.ok(here.post(f"/v1/sessions/{sid}/fork", {}), 201)["session"]["id"]
        of_fork = [nested(here, forked), nested(here, forked)]
        spans = finished_spans(exporter, "POST /graphql", count=9)
    other.http.close()
    marks, view = "session_marks", "session_views"
    assert statements_of(spans, "POST /graphql") == [
        [view], [marks],  # read, then kept
        [marks, view], [marks],  # the Remember elsewhere moved the revision
        [marks],  # the org's settings moved neither
        [marks, view],  # the turn elsewhere moved both
        [marks],  # bo may not reach ana's session: nothing more is read
        [view], [view],  # the fork's sources cite its parent's turns
    ]
    assert unreached is None
    assert answers[0] == answers[1]
    assert [sorted(e["key"] for e in a["memory"]["entries"]["nodes"]) for a in answers] == [
        ["budget", "user-name"], ["budget", "user-name"],
        ["budget", "seat", "user-name"], ["budget", "seat", "user-name"],
        ["budget", "seat", "user-name"], ["budget", "seat", "user-name"],
    ]
    assert [a["memory"]["settings"] for a in answers] == [{"use": True, "generate": True}] * 4 + [
        {"use": True, "generate": False}] * 2
    # each answer is what the other server reads
    assert [answers[3], answers[4], answers[5]] == fresh

    def cited(view: Any) -> set[str]:
        return {s["turn"]["id"] for e in view["memory"]["entries"]["nodes"]
                for s in e["sources"] if s["turn"]}

    # the one turn that consolidation learned from, in the session and in its fork
    assert len(cited(answers[0])) == 1
    assert cited(of_fork[0]) == cited(answers[-1]) == cited(answers[0])
    assert of_fork[0] == of_fork[1]


CONFIGURE = """mutation Configure($id: ID!, $expected: String!, $revision: Int!) {
  configure(sessionId: $id, expected: $expected, revision: $revision, use: false) {
    revision memory { settings { use generate } } } }"""


def test_a_nested_view_after_a_configure_here_is_one_statement_and_shows_a_completed_turn(
    two: Two,
) -> None:
    # A REST Configure made here at the nested view's revision keeps that view, turns
    # and all, so the next nested view is one small statement showing the new overrides (S15,
    # S4). GraphQL's Configure may ask for any of the items' fields, where the nested view read
    # only those it asked: it reads the view.
    # A turn that a source cites changes only by completing (S7's approval), which moves its
    # session's revision: the next nested view is read again and shows it completed.
    here, there, exporter = two.here, two.there, two.exporter
    sid = here.session()["session"]["id"]
    turn = here.turn(sid, user("My name is Ana. Our budget is 1500 EUR.", id="m-1"),
                     status="awaiting_approval")["turn"]
    here.ok(here.command(sid, {"_tag": "Refresh"}))  # learns from the turn awaiting approval
    here.wait_idle(sid)

    def nested(client: Api) -> Any:
        answer = client.graphql(NESTED, id=sid)
        assert "errors" not in answer, answer
        return answer["data"]["session"]

    def statuses(view: Any) -> set[str]:
        return {s["turn"]["status"] for e in view["memory"]["entries"]["nodes"]
                for s in e["sources"] if s["turn"]}

    exporter.clear()  # the statements of what follows only
    with claims_nothing(*two.servers):
        answers = [nested(here)]
        configured = here.ok(here.post(f"/v1/sessions/{sid}/memory", {
            "expected": answers[0]["head"], "revision": answers[0]["revision"],
            "command": {"_tag": "Configure", "use": False}}))
        answers.append(nested(here))
        again = here.graphql(CONFIGURE, id=sid, expected=answers[1]["head"],
                             revision=answers[1]["revision"])["data"]["configure"]
        answers.append(nested(here))
        fresh = [nested(there)]
        completed = there.post(f"/v1/sessions/{sid}/turns/{turn['id']}/complete", {
            "items": [{"type": "approval", "role": "user", "content": "approved"}]})
        assert completed.status_code == 200, completed.text
        answers.append(nested(here))
        fresh.append(nested(there))
        spans = finished_spans(exporter, "POST /graphql", count=5)
    assert statements_of(spans, "POST /v1/sessions/{id}/memory") == [["configure_session"]]
    assert statements_of(spans, "POST /graphql") == [
        ["session_views"], ["session_marks"],
        # GraphQL's Configure reads its view whole, which has no turns: the next nested read
        # reads them again
        ["configure_session+session_views"], ["session_views"],
        ["session_marks", "session_views"]]
    assert answers[2:] == fresh
    assert [a["revision"] for a in (answers[0], configured["session"], answers[1], again)] == [
        answers[0]["revision"] + n for n in (0, 1, 1, 2)]
    assert configured["memory"]["settings"] == answers[1]["memory"]["settings"]
    assert again["memory"]["settings"] == answers[2]["memory"]["settings"]
    assert [a["memory"]["settings"]["use"] for a in answers] == [True, False, False, False]
    assert [statuses(a) for a in answers] == [
        {"AWAITING_APPROVAL"}, {"AWAITING_APPROVAL"}, {"AWAITING_APPROVAL"}, {"COMPLETED"}]
