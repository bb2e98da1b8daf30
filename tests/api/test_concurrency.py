"""S12 under load: concurrent writers with the same head and revision, on the real Neo4j.

Neo4j reads committed data only, so the check must lock the session before it compares; if it
did not, several of these writers would pass the check together.
"""

from __future__ import annotations

import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from tests.conftest import Api, Graph, RunningServer

WRITERS = 50


def counts(graph: Graph) -> dict[str, int]:
    [row] = graph.rows(
        "RETURN COUNT { (:Change) } AS changes, COUNT { (:Item {type: 'memory_edit'}) } AS edits, "
        "COUNT { (:Version) } AS versions"
    )
    return {name: int(value) for name, value in row.items()}


def all_at_once(
    server: RunningServer, token: str, bodies: list[dict[str, Any]], session_id: str
) -> list[httpx.Response]:
    """POST each body to the session's memory from its own thread and client, released together."""
    barrier = threading.Barrier(len(bodies))

    def send(body: dict[str, Any]) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=server.url, headers=headers, timeout=120) as client:
            barrier.wait(timeout=60)
            return client.post(f"/v1/sessions/{session_id}/memory", json=body)

    with ThreadPoolExecutor(len(bodies)) as pool:
        return list(pool.map(send, bodies))


def remember(n: int) -> dict[str, Any]:
    return {"_tag": "Remember", "key": f"fact-{n}", "content": f"Fact number {n}.", "kind": "fact"}


def assert_conflicts(responses: list[httpx.Response]) -> httpx.Response:
    """Exactly one answer is 200, every other one a 409 SessionConflict; the 200 one."""
    statuses = Counter(response.status_code for response in responses)
    assert statuses == {200: 1, 409: len(responses) - 1}, [r.text for r in responses]
    for response in responses:
        if response.status_code == 409:
            assert response.json()["_tag"] == "SessionConflict"
    [winner] = [response for response in responses if response.status_code == 200]
    return winner


def test_fifty_concurrent_remembers_with_the_same_head_and_revision(
    api: Api, graph: Graph, server: RunningServer
) -> None:
    created = api.session()
    sid = created["session"]["id"]
    head, revision = created["session"]["head"], created["session"]["revision"]
    before = counts(graph)
    bodies = [
        {"expected": head, "revision": revision, "command": remember(n)} for n in range(WRITERS)
    ]

    responses = all_at_once(server, api.token, bodies, sid)

    winner = assert_conflicts(responses).json()  # S12: exactly 1 succeeds, 49 get 409
    [key] = winner["memory"]["entries"]
    assert winner["session"]["revision"] == revision + 1
    assert winner["session"]["head"] != head
    assert api.view(sid) == winner  # what the winner was told is what the session holds
    # The graph holds exactly one new change, one memory-edit item and one new version.
    assert counts(graph) == {
        "changes": before["changes"] + 1,
        "edits": before["edits"] + 1,
        "versions": before["versions"] + 1,
    }
    assert graph.value("MATCH (c:Change) RETURN c.key") == key


def test_concurrent_remembers_and_configures_let_exactly_one_through(
    api: Api, graph: Graph, server: RunningServer
) -> None:
    sid = api.session()["session"]["id"]
    view = api.remember(sid, "budget", "The trip budget is 1500 EUR.")
    head, revision = view["session"]["head"], view["session"]["revision"]
    before = counts(graph)
    commands: list[dict[str, Any]] = []
    for n in range(WRITERS):
        if n % 2:
            commands.append(remember(n))
        else:
            commands.append({"_tag": "Configure", "use": n % 4 == 0, "generate": False})
    bodies = [{"expected": head, "revision": revision, "command": c} for c in commands]

    responses = all_at_once(server, api.token, bodies, sid)

    winner = assert_conflicts(responses).json()
    won = commands[responses.index(next(r for r in responses if r.status_code == 200))]
    after = api.view(sid)
    assert after == winner
    assert after["session"]["revision"] == revision + 1  # one change of the session, not more
    if won["_tag"] == "Remember":
        assert set(after["memory"]["entries"]) == {"budget", won["key"]}
        assert after["memory"]["overrides"] == {}
        assert after["session"]["head"] != head
        assert counts(graph) == {
            "changes": before["changes"] + 1,
            "edits": before["edits"] + 1,
            "versions": before["versions"] + 1,
        }
    else:  # S15: Configure keeps the head and writes no history
        assert set(after["memory"]["entries"]) == {"budget"}
        assert after["memory"]["overrides"] == {"use": won["use"], "generate": False}
        assert after["session"]["head"] == head
        assert counts(graph) == before


def test_writers_that_retry_on_conflict_lose_no_update(
    api: Api, graph: Graph, server: RunningServer
) -> None:
    sid = api.session()["session"]["id"]
    writers = 20
    barrier = threading.Barrier(writers)
    headers = {"Authorization": f"Bearer {api.token}"}

    def write(n: int) -> int:
        """Remember fact-n, reading the session again after each 409; the attempts it took."""
        with httpx.Client(base_url=server.url, headers=headers, timeout=120) as client:
            barrier.wait(timeout=60)
            for attempt in range(1, 201):
                session = client.get(f"/v1/sessions/{sid}").json()["session"]
                body = {
                    "expected": session["head"],
                    "revision": session["revision"],
                    "command": remember(n),
                }
                response = client.post(f"/v1/sessions/{sid}/memory", json=body)
                if response.status_code == 200:
                    return attempt
                assert response.status_code == 409, response.text
        raise AssertionError(f"writer {n} never got through")

    with ThreadPoolExecutor(writers) as pool:
        attempts = list(pool.map(write, range(writers)))

    assert len(attempts) == writers
    view = api.view(sid)
    assert view["session"]["revision"] == writers  # each success moved it by exactly one
    assert set(view["memory"]["entries"]) == {f"fact-{n}" for n in range(writers)}
    assert counts(graph) == {"changes": writers, "edits": writers, "versions": writers + 1}
    # The versions form one line: each new head has the one before it as its parent.
    chain = graph.value(
        "MATCH (:Session {id: $id})-[:HEAD]->(h:Version) "
        "MATCH p = (h)-[:PARENT*0..]->(root:Version) WHERE NOT (root)-[:PARENT]->() "
        "RETURN length(p)",
        id=sid,
    )
    assert chain == writers
    revisions = graph.rows("MATCH (c:Change) RETURN c.revision AS r ORDER BY r")
    assert [row["r"] for row in revisions] == list(range(1, writers + 1))


def test_concurrent_turns_on_one_session_each_land_once_with_their_own_ids(
    server: RunningServer, api: Api, graph: Graph
) -> None:
    # S4: turns sent together to one server (each deciding from the snapshot the
    # session's last turn there left, all but one finding the session moved under the lock)
    # are each recorded once, on one branch, with the next item ids in the order they landed
    session = api.session()["session"]["id"]
    api.ok(api.command(session, {"_tag": "Configure", "generate": False}))
    api.remember(session, "budget", "The trip budget is 1500 EUR.")
    first = api.turn(session, {"type": "message", "role": "user", "content": "First."})
    base = first["session"]["revision"]
    barrier = threading.Barrier(10)

    def send(n: int) -> httpx.Response:
        headers = {"Authorization": f"Bearer {api.token}"}
        with httpx.Client(base_url=server.url, headers=headers, timeout=120) as client:
            barrier.wait(timeout=60)
            return client.post(f"/v1/sessions/{session}/turns", json={"items": [
                {"type": "message", "role": "user", "content": f"Turn {n}."}]})

    with ThreadPoolExecutor(10) as pool:
        answers = list(pool.map(send, range(10)))
    assert [a.status_code for a in answers] == [201] * 10, [a.text for a in answers]
    bodies = [a.json() for a in answers]
    assert all(b["turn"]["shown"] == ["budget"] for b in bodies)
    # one revision each, after the first turn's
    assert sorted(b["session"]["revision"] for b in bodies) == list(range(base + 1, base + 11))
    rows = graph.rows(
        "MATCH (:Session {id: $id})-[:HEAD]->(:Version)-[:PARENT*0..]->(:Version)-[:ADDS]->(i)"
        " OPTIONAL MATCH (i)-[:IN_TURN]->(t:Turn) RETURN i.id AS id, i.content AS content,"
        " t.revision AS revision ORDER BY i.seq", id=session)
    assert [r["id"] for r in rows] == [f"i-{n:02d}" for n in range(1, 13)]
    landed = sorted(bodies, key=lambda b: b["session"]["revision"])
    assert [r["revision"] for r in rows[2:]] == [b["session"]["revision"] for b in landed]
    assert [[r["id"]] for r in rows[2:]] == [b["turn"]["items"] for b in landed]
    assert sorted(r["content"] for r in rows[2:]) == sorted(f"Turn {n}." for n in range(10))
