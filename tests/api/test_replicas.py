"""Replicas: two and three servers (each with its own driver, pool and workers, as separate
`serve` processes have) over one Neo4j. S12 holds across them (one winner per head), every
consolidation run and learning job runs once (the leases are the only coordination), nothing
acknowledged is lost; a `neo4j://` (routing) URI works against the local single server; and
a client reads its own write on another `serve` process by sending back the write's
`OpenBot-Bookmark`."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.store.database import Target
from tests.conftest import ROOT, Api, Graph, RunningServer, free_port, user
from tests.conftest import test_settings as settings_for
from tests.openai_stub import OpenAIStub

STUB = "openai:stub"
CONSOLIDATE = "memory_changes"
LEARN = "agent_memory_changes"


def replicas(server: RunningServer, start: Callable[..., RunningServer], n: int) -> list[str]:
    """The URLs of `n` replicas: the suite's server and n - 1 more."""
    return [server.url, *(start().url for _ in range(n - 1))]


@pytest.mark.parametrize("n", [2, 3])
def test_one_winner_per_head_across_replicas(
    server: RunningServer, start_server: Callable[..., RunningServer], api: Api, n: int
) -> None:
    # S12: writers on different replicas with the same head and revision: one 200, the rest 409
    urls = replicas(server, start_server, n)
    session = api.session()["session"]["id"]
    clients = [Api(urls[i % n], api.token) for i in range(4 * n)]
    acked: list[str] = []
    try:
        for round_ in range(3):
            current = api.view(session)["session"]
            barrier = threading.Barrier(len(clients))

            def send(i: int, current: dict[str, Any] = current, r: int = round_,
                     barrier: threading.Barrier = barrier) -> int:
                command = {"_tag": "Remember", "key": f"k{r}-{i}", "content": f"Fact {r} {i}.",
                           "kind": "fact"}
                barrier.wait(timeout=60)
                answer = clients[i].post(f"/v1/sessions/{session}/memory", {
                    "expected": current["head"], "revision": current["revision"],
                    "command": command})
                if answer.status_code == 200:
                    acked.append(f"k{r}-{i}")
                else:
                    assert answer.json()["_tag"] == "SessionConflict", answer.text
                return answer.status_code

            with ThreadPoolExecutor(len(clients)) as pool:
                statuses = Counter(pool.map(send, range(len(clients))))
            assert statuses == {200: 1, 409: len(clients) - 1}
    finally:
        for client in clients:
            client.http.close()
    view = api.view(session)
    assert sorted(view["memory"]["entries"]) == sorted(acked)
    assert view["session"]["revision"] == 3


@pytest.mark.parametrize("n", [2, 3])
def test_each_run_and_learning_job_runs_once_across_replicas(
    server: RunningServer, start_server: Callable[..., RunningServer], api: Api,
    openai_stub: OpenAIStub, graph: Graph, n: int,
) -> None:
    api.ok(api.patch("/v1/org/settings", {"helperModel": STUB, "model": STUB}))
    urls = replicas(server, start_server, n)
    agent = api.agent(shared=True)["id"]
    sessions = [api.session(agent)["session"]["id"] for _ in range(2 * n)]
    clients = [Api(url, api.token) for url in urls]
    try:
        def turns(i: int) -> list[str]:
            ids = []  # each session's turns go to the replicas in turn
            for t in range(3):
                client = clients[(i + t) % n]
                item = user(f"Turn {t} of session {i}: we decided to fly on Tuesdays.",
                            id=f"s{i}-t{t}")
                ids.append(client.turn(sessions[i], item)["turn"]["id"])
            return ids

        with ThreadPoolExecutor(len(sessions)) as pool:
            recorded = list(pool.map(turns, range(len(sessions))))
    finally:
        for client in clients:
            client.http.close()
    for session in sessions:
        api.wait_idle(session, timeout=120)
    api.wait_learned(agent, timeout=120)

    # nothing lost: every acknowledged turn is there
    for session, ids in zip(sessions, recorded, strict=True):
        for turn in ids:
            api.ok(api.get(f"/v1/sessions/{session}/turns/{turn}"))
    # each run and each job was claimed once, and made its model calls once
    runs = graph.rows("MATCH (r:Run) RETURN r.status AS status, r.attempts AS attempts")
    jobs = graph.rows("MATCH (j:LearningJob) RETURN j.status AS status, j.attempts AS attempts")
    assert runs
    assert jobs
    assert {row["attempts"] for row in runs + jobs} == {1}, runs + jobs
    assert {row["status"] for row in runs + jobs} <= {"succeeded", "skipped"}, runs + jobs
    # a run that read items made one model call; no item was read, or learned, twice
    reading = graph.value("MATCH (r:Run) WHERE EXISTS { (r)-[:READ]->() } RETURN count(r)")
    assert len(openai_stub.requests_for(CONSOLIDATE)) == reading
    for edge, by in (("READ", "Run"), ("LEARNED", "LearningJob")):
        twice = graph.value(f"MATCH (i:Item)<-[:{edge}]-(x:{by}) WITH i, count(x) AS n "
                            "WHERE n > 1 RETURN count(i)")
        assert twice == 0, edge
    assert graph.value("MATCH (i:Item)<-[:LEARNED]-() RETURN count(DISTINCT i)") > 0
    print(f"{n} replicas: {len(runs)} runs and {len(jobs)} learning jobs, each run once; "
          f"{len(openai_stub.requests_for(CONSOLIDATE))} consolidation and "
          f"{len(openai_stub.requests_for(LEARN))} learning model calls")


def test_a_routing_uri_works_against_the_local_server(
    neo4j_target: Target, openai_stub: OpenAIStub, graph: Graph
) -> None:
    # neo4j:// asks the server for a routing table; a single server answers with itself
    routed = Target(neo4j_target.uri.replace("bolt://", "neo4j://"), neo4j_target.user,
                    neo4j_target.password, neo4j_target.database)
    assert routed.uri.startswith("neo4j://")
    from tests.conftest import make_token

    running = RunningServer(settings_for(openai_stub, routed), routed)
    try:
        api = Api(running.url, make_token(neo4j_target, "acme", "ana"))
        session = api.session()["session"]["id"]
        api.remember(session, "seat", "Ana prefers a window seat.")
        assert api.view(session)["memory"]["entries"]["seat"]["content"] == (
            "Ana prefers a window seat.")
        api.http.close()
    finally:
        running.stop()


BOOKMARK = "OpenBot-Bookmark"


class Replica:
    """`serve` as a process of its own, against the test run's Neo4j with a routing URI."""

    def __init__(self, target: Target, stub: OpenAIStub, log: Path) -> None:
        self.url = f"http://127.0.0.1:{free_port()}"
        env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "NEO4J_URI": target.uri.replace("bolt://", "neo4j://"),
            "NEO4J_USER": target.user,
            "NEO4J_PASSWORD": target.password,
            "NEO4J_DATABASE": target.database,
            "OPENAI_BASE_URL": stub.url,
            "OPENAI_API_KEY": "x",
            "OPENBOT_MEMORY_WARMUP_ROUNDS": "0",  # as the suite's servers (tests/conftest.py)
        }
        self.log = log
        with log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "app", "serve", "--port", self.url.rsplit(":", 1)[1]],
                env=env, cwd=log.parent, stdout=out, stderr=subprocess.STDOUT,
            )

    def wait_ready(self) -> None:
        deadline = time.monotonic() + 300  # a warm-up on a cold Neo4j and a loaded machine
        while True:
            if self.process.poll() is not None:
                raise AssertionError(f"the replica exited:\n{self.log.read_text()[-3000:]}")
            try:
                if httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"the replica did not start:\n{self.log.read_text()[-3000:]}")
            time.sleep(0.1)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=30)


@pytest.fixture
def two_replicas(
    neo4j_target: Target, openai_stub: OpenAIStub, tmp_path: Path, graph: Graph
) -> Iterator[tuple[str, str]]:
    started = [Replica(neo4j_target, openai_stub, tmp_path / f"replica-{n}.log") for n in (1, 2)]
    try:
        for replica in started:
            replica.wait_ready()
        yield started[0].url, started[1].url
    finally:
        for replica in started:
            replica.stop()


def test_a_client_reads_its_own_write_on_another_replica_with_the_bookmark(
    two_replicas: tuple[str, str], tokens: Callable[[str, str], str]
) -> None:
    # Each write's answer carries its bookmark; sent back, a read on another process reads at
    # least that state. (One Neo4j serves both here: what is checked is that the bookmark
    # passes, and reaches the database, which refuses one it never gave.)
    token = tokens("acme", "ana")
    one, other = Api(two_replicas[0], token), Api(two_replicas[1], token)
    created = one.post("/v1/agents", {"name": "trip planner"})
    assert created.status_code == 201, created.text
    bookmark = created.headers[BOOKMARK]
    assert bookmark
    agent = created.json()["id"]
    started = other.post("/v1/sessions", {"agent": agent}, headers={BOOKMARK: bookmark})
    assert started.status_code == 201, started.text
    session = started.json()["session"]
    bookmark = started.headers[BOOKMARK]
    remembered = one.post(
        f"/v1/sessions/{session['id']}/memory",
        {"expected": session["head"], "revision": session["revision"],
         "command": {"_tag": "Remember", "key": "seat", "content": "A window seat.",
                     "kind": "fact"}},
        headers={BOOKMARK: bookmark},
    )
    assert remembered.status_code == 200, remembered.text
    read = other.get(f"/v1/sessions/{session['id']}",
                     headers={BOOKMARK: remembered.headers[BOOKMARK]})
    assert read.status_code == 200, read.text
    assert read.json()["memory"]["entries"]["seat"]["content"] == "A window seat."
    assert BOOKMARK not in read.headers  # a read wrote nothing
    # GraphQL's writes carry it too
    answer = other.post("/graphql", {
        "query": "mutation($s: ID!) { fork(sessionId: $s) { id } }",
        "variables": {"s": session["id"]}})
    assert answer.status_code == 200, answer.text
    assert "errors" not in answer.json(), answer.json()
    assert answer.headers.get(BOOKMARK), answer.json()

    for malformed in ("two words", "é", ",", "FB:" + "x" * 600, ",".join(["FB:a"] * 9)):
        refused = other.get(f"/v1/agents/{agent}", headers={BOOKMARK: malformed.encode()})
        assert refused.status_code == 400, (malformed, refused.text)
        assert refused.json()["_tag"] == "ValidationError"
        assert refused.json()["field"] == BOOKMARK
    # well formed, but no bookmark the database gave
    refused = other.get(f"/v1/agents/{agent}", headers={BOOKMARK: "FB:bogus"})
    assert refused.status_code == 400, refused.text
    assert refused.json()["field"] == BOOKMARK
    # a memory command names the header too (its command's own fields are `command.…`), and
    # writes nothing
    view = other.get(f"/v1/sessions/{session['id']}").json()
    refused = other.post(
        f"/v1/sessions/{session['id']}/memory",
        {"expected": view["session"]["head"], "revision": view["session"]["revision"],
         "command": {"_tag": "Forget", "key": "seat"}},
        headers={BOOKMARK: "FB:bogus"},
    )
    assert refused.status_code == 400, refused.text
    assert refused.json()["field"] == BOOKMARK
    assert other.get(f"/v1/sessions/{session['id']}").json() == view
