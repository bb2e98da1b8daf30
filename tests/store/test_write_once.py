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
from tests.conftest import Api, Graph

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
