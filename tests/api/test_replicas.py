"""Replicas: two and three servers (each with its own driver, pool and workers, as separate
`serve` processes have) over one Neo4j. S12 holds across them (one winner per head), every
consolidation run and learning job runs once (the leases are the only coordination), nothing
acknowledged is lost; and a `neo4j://` (routing) URI works against the local single server."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from app.store.database import Target
from tests.conftest import Api, Graph, RunningServer, user
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
