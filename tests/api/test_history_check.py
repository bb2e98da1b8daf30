"""S12 and A10 as a list-append history (Elle's style): T writers x U read-modify-write appends on
a few shared sessions (and an agent's memory), each a Remember at the head and revision (or the
version) the writer read, retried on 409. The checker (tests/history.py) finds lost, duplicated
and phantom appends, non-prefix reads and revision gaps; it is shown to fail on bad histories."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from tests.conftest import Api, RunningServer
from tests.history import Append, Read, Recorder, Store, check, content_of, play, values_of

WRITERS = 6
OPS = 15
KEYS = 3


# --- the checker fails on bad histories -------------------------------------------------

def read(values: str, revision: int, at: float, key: str = "k") -> Read:
    listed = tuple(values.split())
    return Read(key, at, at + 0.1, listed, revision)


def ok(value: str, revision: int, at: float, key: str = "k") -> Append:
    return Append(key, value, at, at + 0.1, "ok", revision)


def test_a_valid_history_has_no_anomaly() -> None:
    reads = [read("", 0, 0), read("a", 1, 2), read("a b", 2, 4)]
    appends = [ok("a", 1, 1), Append("k", "b", 1, 1.1, "fail"), ok("b", 2, 3)]
    assert check(reads, appends, {"k": 0}) == []


def test_a_lost_write_is_found() -> None:
    reads = [read("a", 1, 2), read("a", 1, 4)]  # b was acknowledged at 3.1, then not read
    problems = check(reads, [ok("a", 1, 1), ok("b", 2, 3)], {"k": 0})
    assert any("acknowledged b missing" in p for p in problems), problems
    assert any("final list 0 times" in p for p in problems), problems


def test_a_duplicated_write_is_found() -> None:
    problems = check([read("a b a", 3, 5)], [ok("a", 1, 1), ok("b", 2, 3)], {"k": 0})
    assert any("a twice in a read" in p for p in problems), problems
    assert any("final list 2 times" in p for p in problems), problems


def test_a_read_that_is_no_prefix_of_a_later_one_is_found() -> None:
    reads = [read("a b", 2, 3), read("b a", 2, 5)]
    problems = check(reads, [ok("a", 1, 1), ok("b", 2, 2)], {"k": 0})
    assert any("is not a prefix" in p for p in problems), problems


def test_phantoms_refused_writes_gaps_and_going_back_are_found() -> None:
    reads = [read("a x", 3, 3), read("a", 1, 5)]
    appends = [ok("a", 1, 1), Append("k", "x", 2, 2.1, "fail")]
    problems = check(reads, appends, {"k": 0})
    assert any("x was refused" in p for p in problems), problems
    assert any("revisions with a gap" in p for p in problems), problems
    assert any("a later read" in p and "lost" in p for p in problems), problems
    assert any("never appended" in p for p in check([read("z", 1, 1)], [], {})), "phantom"
    assert any("acknowledged twice" in p
               for p in check([], [ok("a", 1, 1), ok("b", 1, 2)], {"k": 0}))


# --- against the live service ---------------------------------------------------------------

def session_store(api: Api) -> Store:
    """Sessions: the list is in entry `log`; a write is a Remember at the head and revision read."""
    def read_session(key: str) -> tuple[tuple[str, ...], int, object]:
        view = api.view(key)
        entry = view["memory"]["entries"].get("log") or {}
        current = view["session"]
        return values_of(entry.get("content")), current["revision"], current

    def write(key: str, seen: object, content: str) -> tuple[int, int | None]:
        assert isinstance(seen, dict)
        command = {"_tag": "Remember", "key": "log", "content": content, "kind": "fact"}
        answer = api.post(f"/v1/sessions/{key}/memory", {
            "expected": seen["head"], "revision": seen["revision"], "command": command})
        if answer.status_code == 409:
            assert answer.json()["_tag"] == "SessionConflict"
        revision = answer.json()["session"]["revision"] if answer.status_code == 200 else None
        return answer.status_code, revision

    return Store(read_session, write)


def agent_store(api: Api) -> Store:
    """An agent's memory (A10): the list is in entry `log`; a write names the version read."""
    def read_agent(key: str) -> tuple[tuple[str, ...], int, object]:
        memory = api.ok(api.get(f"/v1/agents/{key}/memory"))
        entry = memory["entries"].get("log") or {}
        return values_of(entry.get("content")), memory["version"], memory["version"]

    def write(key: str, seen: object, content: str) -> tuple[int, int | None]:
        command = {"_tag": "Remember", "key": "log", "content": content, "kind": "procedure"}
        answer = api.post(f"/v1/agents/{key}/memory", {"expected": seen, "command": command})
        if answer.status_code == 409:
            assert answer.json()["_tag"] == "AgentConflict"
        version = answer.json()["version"] if answer.status_code == 200 else None
        return answer.status_code, version

    return Store(read_agent, write)


def run_writers(server: RunningServer, token: str, keys: list[str],
                store_of: Callable[[Api], Store], writers: int = WRITERS) -> Recorder:
    """`writers` threads, each with a client of its own, `OPS` appends each."""
    recorder = Recorder()
    clients = [Api(server.url, token) for _ in range(writers)]
    try:
        with ThreadPoolExecutor(writers) as pool:
            for done in [pool.submit(play, store_of(c), recorder, n, keys, OPS)
                         for n, c in enumerate(clients)]:
                done.result()
    finally:
        for client in clients:
            client.http.close()
    return recorder


def final_reads(store: Store, keys: list[str]) -> list[Read]:
    """One last read of each key once every writer is done."""
    out = []
    for key in keys:
        at = 1e12  # after everything the writers did
        values, revision, _ = store.read(key)
        out.append(Read(key, at, at, values, revision))
    return out


def test_sessions_lose_and_duplicate_no_append(server: RunningServer, api: Api) -> None:
    # S12: each Remember names the head and revision it read; a stale one is 409, retried
    agent = api.agent()["id"]
    keys = [api.session(agent)["session"]["id"] for _ in range(KEYS)]
    base = {key: api.remember(key, "log", content_of(()))["session"]["revision"] for key in keys}
    recorder = run_writers(server, api.token, keys, session_store)
    reads = recorder.reads + final_reads(session_store(api), keys)
    assert check(reads, recorder.appends, base) == []
    acked = [a for a in recorder.appends if a.outcome == "ok"]
    assert len(acked) == WRITERS * OPS
    found = sum(len(r.values) for r in reads[-KEYS:])
    print(f"list-append over sessions: {len(acked)} appends acknowledged, {found} found, "
          f"{sum(a.outcome == 'fail' for a in recorder.appends)} 409s retried, "
          f"{len(reads)} reads checked")
    assert found == len(acked)


def test_agent_memory_loses_and_duplicates_no_append(server: RunningServer, api: Api) -> None:
    # A10: each Remember names the version it read; a stale one is 409 AgentConflict, retried
    agents = [api.agent(f"agent {n}")["id"] for n in range(2)]
    base: dict[str, Any] = {}
    for agent in agents:
        answer = api.post(f"/v1/agents/{agent}/memory", {"expected": 0, "command": {
            "_tag": "Remember", "key": "log", "content": content_of(()), "kind": "procedure"}})
        base[agent] = api.ok(answer)["version"]
    recorder = run_writers(server, api.token, agents, agent_store, writers=4)
    reads = recorder.reads + final_reads(agent_store(api), agents)
    assert check(reads, recorder.appends, base) == []
    acked = [a for a in recorder.appends if a.outcome == "ok"]
    assert len(acked) == 4 * OPS
    assert sum(len(r.values) for r in reads[-len(agents):]) == len(acked)


def test_the_recorder_sees_what_the_service_answers(api: Api) -> None:
    # the client half of the checker reads what it wrote (so a passing history means something)
    session = api.session()["session"]["id"]
    api.remember(session, "log", content_of(("a", "b")))
    values, revision, _ = session_store(api).read(session)
    assert values == ("a", "b")
    assert revision == 1
    assert isinstance(api.http, httpx.Client)
