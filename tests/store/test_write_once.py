"""A one-statement memory command (Remember, Forget, Configure) that applies is one auto-commit
statement (one round trip); a conflict still answers 409 SessionConflict and writes nothing; a
transient error (a deadlock between writers) is retried by the service, and the write lands
once."""

from __future__ import annotations

from typing import Any

import neo4j
import pytest
from neo4j.exceptions import Neo4jError

from app.store import database
from app.store.database import Tx
from tests.conftest import Api, Graph, RunningServer, claims_nothing, user

COMMANDS = ("record_memory_edit", "configure_session")


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bool]]:
    """The memory commands' statements as they are sent: (name, in an auto-commit transaction)."""
    seen: list[tuple[str, bool]] = []
    rows = Tx.rows

    async def spy(self: Tx, name: str, **params: Any) -> list[dict[str, Any]]:
        if any(part in name for part in COMMANDS):
            seen.append((name, isinstance(self._tx, neo4j.AsyncSession)))
        return await rows(self, name, **params)

    monkeypatch.setattr(database.Tx, "rows", spy)
    return seen


def post(api: Api, sid: str, command: dict[str, Any], at: dict[str, Any] | None = None) -> Any:
    session = at or api.view(sid)["session"]
    return api.post(f"/v1/sessions/{sid}/memory", {
        "expected": session["head"], "revision": session["revision"], "command": command})


def changes(graph: Graph, key: str) -> int:
    return int(graph.value("MATCH (c:Change {key: $key}) RETURN count(c)", key=key))


def test_a_command_that_applies_is_one_auto_commit_statement(
    api: Api, graph: Graph, sent: list[tuple[str, bool]]
) -> None:
    sid = api.session()["session"]["id"]
    for command in (
        {"_tag": "Remember", "key": "budget", "content": "1500 EUR.", "kind": "fact"},
        {"_tag": "Forget", "key": "budget"},
        {"_tag": "Configure", "generate": False},
    ):
        sent.clear()
        before = api.view(sid)["session"]
        answer = api.ok(post(api, sid, command, before))
        assert answer["session"]["revision"] == before["revision"] + 1  # S15
        # one statement, sent once, in an auto-commit transaction
        assert len(sent) == 1
        assert sent[0][1] is True
    assert changes(graph, "budget") == 2  # a Remember and a Forget, each once (S13, S14)
    view = api.view(sid)
    assert view["memory"]["entries"]["budget"]["status"] == "retracted"
    assert view["memory"]["overrides"]["generate"] is False


def test_a_conflict_answers_409_and_writes_nothing(
    api: Api, graph: Graph, sent: list[tuple[str, bool]]
) -> None:
    sid = api.session()["session"]["id"]
    stale = api.view(sid)["session"]
    api.remember(sid, "budget", "1500 EUR.")
    now = api.view(sid)["session"]
    for command in (
        {"_tag": "Remember", "key": "budget", "content": "900 EUR.", "kind": "fact"},
        {"_tag": "Forget", "key": "budget"},
        {"_tag": "Configure", "generate": False},
    ):
        answer = post(api, sid, command, stale)
        assert answer.status_code == 409, answer.text  # S12
        assert answer.json()["_tag"] == "SessionConflict"
    assert api.view(sid)["session"] == now
    assert changes(graph, "budget") == 1
    # a Forget of a key the memory does not have is a conflict too (S14)
    answer = post(api, sid, {"_tag": "Forget", "key": "seat"})
    assert answer.status_code == 409
    assert answer.json()["_tag"] == "SessionConflict"
    assert changes(graph, "seat") == 0


def test_a_transient_error_is_retried_and_the_write_lands_once(
    api: Api, graph: Graph, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = api.session()["session"]["id"]
    attempts: list[bool] = []
    rows = Tx.rows

    async def deadlocked_once(self: Tx, name: str, **params: Any) -> list[dict[str, Any]]:
        if "record_memory_edit" in name:
            attempts.append(isinstance(self._tx, neo4j.AsyncSession))
            if len(attempts) == 1:  # as Neo4j answers a deadlock: nothing was written
                raise Neo4jError._hydrate_neo4j(
                    code="Neo.TransientError.Transaction.DeadlockDetected", message="deadlock"
                )
        return await rows(self, name, **params)

    monkeypatch.setattr(database.Tx, "rows", deadlocked_once)
    before = api.view(sid)["session"]
    answer = api.ok(post(api, sid, {"_tag": "Remember", "key": "budget", "content": "1500 EUR.",
                                    "kind": "fact"}, before))
    assert attempts == [True, True]  # the same auto-commit statement, sent again
    assert answer["session"]["revision"] == before["revision"] + 1
    assert answer["memory"]["entries"]["budget"]["content"] == "1500 EUR."
    assert changes(graph, "budget") == 1
    assert graph.value("MATCH (i:Item {type: 'memory_edit'}) RETURN count(i)") == 1


TURN_PARTS = ("lock_session", "take_session_lock", "record_turn")
ONCE = "take_session_lock+record_turn"
LOCK, RECORD = "lock_session+instruction_entries", "record_turn"


@pytest.fixture
def turn_sent(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bool]]:
    """A turn's statements as they are sent: (name, in an auto-commit transaction)."""
    seen: list[tuple[str, bool]] = []
    rows = Tx.rows

    async def spy(self: Tx, name: str, **params: Any) -> list[dict[str, Any]]:
        if any(part in name for part in TURN_PARTS):
            seen.append((name, isinstance(self._tx, neo4j.AsyncSession)))
        return await rows(self, name, **params)

    monkeypatch.setattr(database.Tx, "rows", spy)
    return seen


def session_turns(graph: Graph, sid: str) -> list[dict[str, Any]]:
    return graph.rows(
        "MATCH (t:Turn)-[:IN_SESSION]->(:Session {id: $id}) "
        "RETURN t.id AS id, t.shown AS shown, t.shownAgent AS shownAgent, t.revision AS revision,"
        " COUNT { (i:Item)-[:IN_TURN]->(t) } AS items,"
        " COUNT { (v:Version {cause: 'turn', revision: t.revision})-[:OF]->() } AS versions"
        " ORDER BY t.revision", id=sid)


def test_a_turn_from_the_kept_snapshot_is_one_auto_commit_statement(
    api: Api, graph: Graph, server: RunningServer, turn_sent: list[tuple[str, bool]]
) -> None:
    # A turn decided from the snapshot the process kept of its session, where the session is
    # still as the snapshot had it, is recorded by one statement in one round trip. S5.
    with claims_nothing(server):
        sid = api.session()["session"]["id"]
        api.remember(sid, "budget", "The trip budget is 1500 EUR.")
        turn_sent.clear()
        first = api.turn(sid, user("Hello."))
        assert turn_sent == [(LOCK, False), (RECORD, False)]  # no snapshot yet
        turn_sent.clear()
        second = api.turn(sid, user("Where to?"))
        assert turn_sent == [(ONCE, True)]
        # read while no worker may claim the runs the turns queued (a run moves the revision)
        turns = session_turns(graph, sid)
        view = api.view(sid)
    assert second["session"]["revision"] == first["session"]["revision"] + 1  # S15
    assert second["turn"]["shown"] == ["budget"]  # S5
    assert [t["id"] for t in turns] == [first["turn"]["id"], second["turn"]["id"]]
    assert [(t["items"], t["versions"]) for t in turns] == [(1, 1), (1, 1)]
    assert view["session"]["revision"] == second["session"]["revision"]
    assert view["session"]["head"] == second["session"]["head"]


def test_a_turn_from_a_stale_snapshot_is_decided_again_and_recorded_once(
    api: Api, graph: Graph, server: RunningServer, turn_sent: list[tuple[str, bool]]
) -> None:
    # The snapshot a process kept goes stale when a write it did not see moves the session's
    # revision (a Remember), its agent's memory version (an agent's entry), or neither (the
    # org's settings, written straight to the graph): the one statement writes nothing, and
    # the turn is decided again under the lock, shown memory as it is when it starts (S5, S4),
    # and recorded once.
    with claims_nothing(server):
        agent = api.agent()["id"]
        sid = api.session(agent)["session"]["id"]
        answers = [api.turn(sid, user("Hello.")), api.turn(sid, user("Where to?"))]
        api.remember(sid, "budget", "The trip budget is 1500 EUR.")
        turn_sent.clear()
        answers.append(api.turn(sid, user("Book it.")))
        assert turn_sent == [(ONCE, True), (LOCK, False), (RECORD, False)]
        version = api.ok(api.get(f"/v1/agents/{agent}/memory"))["version"]
        api.ok(api.post(f"/v1/agents/{agent}/memory", {"expected": version, "command": {
            "_tag": "Remember", "key": "tone", "content": "Answer briefly.",
            "kind": "procedure"}}))
        turn_sent.clear()
        answers.append(api.turn(sid, user("And the hotel?")))
        assert turn_sent == [(ONCE, True), (LOCK, False), (RECORD, False)]
        graph.rows("MATCH (:Session {id: $id})-[:OF_AGENT]->(:Agent)-[:IN_ORG]->(o) "
                   "SET o.memoryUse = false", id=sid)
        turn_sent.clear()
        answers.append(api.turn(sid, user("Anything else?")))
        assert turn_sent == [(ONCE, True), (LOCK, False), (RECORD, False)]
        turn_sent.clear()
        answers.append(api.turn(sid, user("Thanks.")))
        assert turn_sent == [(ONCE, True)]  # the snapshot holds again
        # read while no worker may claim the runs the turns queued (a run may move the head)
        head = graph.value("MATCH (:Session {id: $id})-[:HEAD]->(h) RETURN h.id", id=sid)
    shown = [(a["turn"]["shown"], a["turn"]["shownAgent"]) for a in answers]
    assert shown == [
        ([], []), ([], []),
        (["budget"], []),
        (["budget"], ["tone"]),
        ([], ["tone"]), ([], ["tone"]),
    ]
    # the graph: each turn once, whole, as it was answered
    turns = session_turns(graph, sid)
    assert [(t["id"], t["shown"], t["shownAgent"]) for t in turns] == [
        (a["turn"]["id"], *s) for a, s in zip(answers, shown, strict=True)
    ]
    assert [t["revision"] for t in turns] == [a["session"]["revision"] for a in answers]
    assert [(t["items"], t["versions"]) for t in turns] == [(1, 1)] * len(answers)
    assert head == answers[-1]["session"]["head"]
