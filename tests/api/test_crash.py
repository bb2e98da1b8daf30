"""S7, S11: consolidation runs are durable. The service runs as a real process; `kill -9` it
while a run is running or queued, start it again: the run runs once more and completes, no
item is read by two succeeded runs, nothing is lost."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.store.database import Target
from tests.conftest import ROOT, Api, Graph, RunningServer, free_port, user
from tests.openai_stub import OpenAIStub, Reply, changes

STUB = "openai:test"
# The attempt that is killed waits on this until the test is over: the model is "still
# working" for as long as the test needs, with no timing window.
HELD = threading.Event()


class Service:
    """`openbot-memory serve` as a child process, against the test run's Neo4j and model."""

    def __init__(
        self, target: Target, stub: OpenAIStub, log: Path, env: dict[str, str] | None = None
    ) -> None:
        self.target = target
        self.stub = stub
        self.log = log
        self.env = env or {}  # settings of this service beside the test run's
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {
            **os.environ,
            "NEO4J_URI": self.target.uri,
            "NEO4J_USER": self.target.user,
            "NEO4J_PASSWORD": self.target.password,
            "NEO4J_DATABASE": self.target.database,
            "OPENAI_BASE_URL": self.stub.url,
            "OPENAI_API_KEY": "x",
            "OPENBOT_MEMORY_MODEL_TIMEOUT_SECONDS": "30",
            "OPENBOT_MEMORY_MODEL_RETRIES": "0",
            "OPENBOT_MEMORY_WORKER_POLL_SECONDS": "0.2",
            # a killed process's run goes back to the queue once its lease runs out
            "OPENBOT_MEMORY_RUN_LEASE_SECONDS": "3",
            "OPENBOT_MEMORY_WARMUP_ROUNDS": "0",  # as the suite's servers (tests/conftest.py)
            **self.env,
        }
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "app", "serve", "--port", str(self.port)],
                env={**env, "PYTHONPATH": str(ROOT)},
                cwd=self.log.parent,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 90
        while True:
            if self.process.poll() is not None:
                raise AssertionError(f"the service exited:\n{self.log.read_text()[-3000:]}")
            try:
                if httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"the service did not start:\n{self.log.read_text()[-3000:]}")
            time.sleep(0.1)

    def kill9(self) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        assert self.process.returncode == -signal.SIGKILL

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=30)


@pytest.fixture
def service(
    neo4j_target: Target,
    openai_stub: OpenAIStub,
    graph: Graph,
    tmp_path: Path,
    server: RunningServer,
) -> Iterator[Service]:
    # The run's in-process server shares the database: paused, it claims none of this
    # service's runs, so each test sees what one process and its restart do.
    server.service.consolidation.pool.paused = True
    running = Service(neo4j_target, openai_stub, tmp_path / "service.log")
    running.start()
    yield running
    running.stop()
    server.service.consolidation.pool.paused = False


@pytest.fixture
def client(service: Service, tokens: Callable[[str, str], str]) -> Iterator[Api]:
    api = Api(service.url, tokens("acme", "ana"))
    yield api
    api.http.close()


def remember(key: str, content: str, sources: list[str]) -> dict[str, Any]:
    return {"op": "remember", "key": key, "content": content, "kind": "fact", "sources": sources}


@pytest.fixture(autouse=True)
def release_held_model() -> Iterator[None]:
    HELD.clear()
    yield
    HELD.set()  # frees the stub's thread of the killed attempt


def slow(*items: dict[str, Any]) -> Reply:
    """An answer that comes only after the test (its asker is killed first)."""
    return Reply(gate=HELD, content=json.dumps({"changes": list(items)}))


def wait_until(what: str, done: Callable[[], bool], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        time.sleep(0.05)


def run_states(graph: Graph, session_id: str) -> list[dict[str, Any]]:
    rows = graph.rows(
        "MATCH (r:Run)-[:FOR_SESSION]->(:Session {id: $id}) "
        "RETURN r.id AS id, r.status AS status, r.attempts AS attempts ORDER BY r.queuedAt, r.id",
        id=session_id,
    )
    return rows


def assert_each_item_read_once(graph: Graph, session_id: str, items: list[str]) -> None:
    """No item is read by two succeeded runs, and none is lost: each is read by exactly one."""
    twice = graph.value(
        "MATCH (r:Run {status: 'succeeded'})-[:READ]->(i:Item) "
        "WITH i, count(r) AS readers WHERE readers > 1 RETURN count(i)"
    )
    assert twice == 0
    reads = graph.rows(
        "MATCH (:Session {id: $id})-[:HEAD]->(h:Version) "
        "MATCH (h)-[:PARENT*0..]->(:Version)-[:ADDS]->(i:Item) "
        "OPTIONAL MATCH (r:Run {status: 'succeeded'})-[:READ]->(i) "
        "WITH i, count(r) AS readers ORDER BY i.seq RETURN i.id AS item, readers",
        id=session_id,
    )
    assert reads == [{"item": item, "readers": 1} for item in items]


def test_a_run_killed_while_running_runs_again_once_after_restart(
    service: Service, client: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # S7, S11
    sid = client.session(model=STUB)["session"]["id"]
    openai_stub.script(
        slow(remember("budget", "The trip budget is 1500 EUR (first attempt).", ["m-1"])),
        changes(remember("budget", "The trip budget is 1500 EUR.", ["m-1"])),
    )
    turn = client.turn(sid, user("Our budget is 1500 EUR.", id="m-1"))["turn"]
    wait_until("the model is asked", lambda: len(openai_stub.requests) == 1)
    assert [r["status"] for r in run_states(graph, sid)] == ["running"]

    service.kill9()
    # the process is gone mid-run: the run is still marked running, nothing was applied
    assert [r["status"] for r in run_states(graph, sid)] == ["running"]
    assert graph.value("MATCH (c:Change) RETURN count(c)") == 0

    service.start()
    [run] = client.wait_idle(sid, timeout=60)
    assert run["status"] == "succeeded"
    assert run["turn"] == turn["id"]
    assert run["attempts"] == 2
    assert run["read"] == ["m-1"]
    assert len(openai_stub.requests) == 2
    entries = client.ok(client.get(f"/v1/sessions/{sid}/memory"))["entries"]
    assert {k: e["content"] for k, e in entries.items()} == {
        "budget": "The trip budget is 1500 EUR."
    }
    assert graph.value("MATCH (c:Change {key: 'budget'}) RETURN count(c)") == 1
    assert_each_item_read_once(graph, sid, ["m-1"])


def test_a_run_queued_behind_a_running_one_survives_a_kill(
    service: Service, client: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # S7: one run at a time per session; the second turn's run is queued, not started, when
    # the service dies. After restart both run; the items are read once.
    sid = client.session(model=STUB)["session"]["id"]
    openai_stub.script(
        slow(remember("budget", "The trip budget is 1500 EUR (first attempt).", ["m-1"])),
        changes(
            remember("budget", "The trip budget is 1500 EUR.", ["m-1"]),
            remember("seat", "Ana prefers window seats.", ["m-2"]),
        ),
    )
    first = client.turn(sid, user("Our budget is 1500 EUR.", id="m-1"))["turn"]
    wait_until("the model is asked", lambda: len(openai_stub.requests) == 1)
    second = client.turn(sid, user("I prefer window seats.", id="m-2"))["turn"]
    assert [r["status"] for r in run_states(graph, sid)] == ["running", "queued"]

    service.kill9()
    assert [r["status"] for r in run_states(graph, sid)] == ["running", "queued"]

    service.start()
    done = client.wait_idle(sid, timeout=60)
    by_turn = {run["turn"]: run for run in done}
    assert set(by_turn) == {first["id"], second["id"]}
    assert all(run["status"] == "succeeded" for run in done)
    # the first run, run again, read both turns' items; the second found nothing left to read
    assert by_turn[first["id"]]["read"] == ["m-1", "m-2"]
    assert by_turn[second["id"]]["read"] == []
    assert by_turn[second["id"]]["attempts"] == 1
    entries = client.ok(client.get(f"/v1/sessions/{sid}/memory"))["entries"]
    assert {k: e["content"] for k, e in entries.items()} == {
        "budget": "The trip budget is 1500 EUR.",
        "seat": "Ana prefers window seats.",
    }
    assert len(openai_stub.requests) == 2
    assert_each_item_read_once(graph, sid, ["m-1", "m-2"])


def test_a_kill_right_after_the_turn_loses_nothing(
    service: Service, client: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # S7: the run was queued in the turn's own transaction; whether it had started or not
    # when the service died, it runs after the restart, once
    sid = client.session(model=STUB)["session"]["id"]
    openai_stub.script(
        slow(remember("budget", "The trip budget is 1500 EUR (first attempt).", ["m-1"])),
        changes(remember("budget", "The trip budget is 1500 EUR.", ["m-1"])),
    )
    response = client.post(
        f"/v1/sessions/{sid}/turns", {"items": [user("Our budget is 1500 EUR.", id="m-1")]}
    )
    service.kill9()
    assert response.status_code == 201, response.text
    [state] = run_states(graph, sid)
    assert state["status"] in ("queued", "running")

    service.start()
    # the held answer goes to the killed attempt (whose process is gone), or, if the run was
    # not claimed before the kill, to the restarted one's first attempt
    HELD.set()
    [run] = client.wait_idle(sid, timeout=60)
    assert run["status"] == "succeeded"
    assert run["read"] == ["m-1"]
    assert run["attempts"] in (1, 2)  # claimed before the kill, or only after the restart
    # whichever scripted answer the last attempt got, it applied once
    entries = client.ok(client.get(f"/v1/sessions/{sid}/memory"))["entries"]
    assert list(entries) == ["budget"]
    assert entries["budget"]["content"].startswith("The trip budget is 1500 EUR")
    assert graph.value("MATCH (c:Change {key: 'budget'}) RETURN count(c)") == 1
    assert_each_item_read_once(graph, sid, ["m-1"])


def test_a_restart_without_a_crash_changes_nothing(
    service: Service, client: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # S7: finished runs stay finished; a restart runs none of them again
    sid = client.session(model=STUB)["session"]["id"]
    openai_stub.script(changes(remember("budget", "The trip budget is 1500 EUR.", ["m-1"])))
    client.turn(sid, user("Our budget is 1500 EUR.", id="m-1"))
    [before] = client.wait_idle(sid)
    assert before["status"] == "succeeded"
    service.kill9()
    service.start()
    [after] = client.wait_idle(sid)
    assert after == before
    assert len(openai_stub.requests) == 1
    assert_each_item_read_once(graph, sid, ["m-1"])


def test_a_run_whose_process_dies_three_times_ends_failed(
    service: Service, client: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # S11: a run may be what ends its process (its input exhausts the memory): after its lease
    # ran out three times it ends failed, with its error, rather than being taken up again
    # forever, holding the session's later runs behind it. A process that stops ends its lease,
    # which is no lapse. The run's items stay unprocessed, and the next turn's run reads them.
    sid = client.session(model=STUB)["session"]["id"]
    openai_stub.script(
        *[slow(remember("budget", "The trip budget is 1500 EUR.", ["m-1"]))] * 4,
        changes(
            remember("budget", "The trip budget is 1500 EUR.", ["m-1"]),
            remember("seat", "Ana prefers window seats.", ["m-2"]),
        ),
    )
    first = client.turn(sid, user("Our budget is 1500 EUR.", id="m-1"))["turn"]
    wait_until("the model is asked", lambda: len(openai_stub.requests) == 1)
    service.stop()  # SIGTERM: the process ends the run's lease as it stops
    service.start()
    for asked in (2, 3, 4):
        wait_until(f"the model is asked {asked} times",
                   lambda: len(openai_stub.requests) == asked)  # noqa: B023 (called at once)
        service.kill9()
        assert [r["status"] for r in run_states(graph, sid)] == ["running"]
        service.start()

    [run] = client.wait_idle(sid, timeout=60)
    assert run["turn"] == first["id"]
    assert run["status"] == "failed"
    assert run["attempts"] == 4
    assert run["error"] == (
        "the run was stopped 3 times by the end of the process running it, and is not run again"
    )
    assert run["read"] == []
    assert client.ok(client.get(f"/v1/sessions/{sid}/memory"))["entries"] == {}
    assert len(openai_stub.requests) == 4

    second = client.turn(sid, user("I prefer window seats.", id="m-2"))["turn"]
    runs = {r["turn"]: r for r in client.wait_idle(sid, timeout=60)}
    assert runs[second["id"]]["status"] == "succeeded"
    assert runs[second["id"]]["read"] == ["m-1", "m-2"]
    entries = client.ok(client.get(f"/v1/sessions/{sid}/memory"))["entries"]
    assert {k: e["content"] for k, e in entries.items()} == {
        "budget": "The trip budget is 1500 EUR.",
        "seat": "Ana prefers window seats.",
    }
    assert_each_item_read_once(graph, sid, ["m-1", "m-2"])
