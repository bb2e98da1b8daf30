"""A2, S11 for agents: learning jobs are durable. The service runs as a real process
(`openbot-memory serve`); `kill -9` it while a learning job waits on the helper model, start it
again: the job runs to success once more, and nothing is learned twice.

The helper's reply is held by a gate the test opens after the restart (so the killed process's
request goes nowhere); a fresh reply is scripted for the retry.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from app.store.database import Target
from tests.api.test_agent_memory import agent_log, agent_memory
from tests.api.test_crash import Service, wait_until
from tests.api.test_learning import (
    CONSOLIDATE,
    LEARN,
    answer,
    change,
    helper_is_stub,
    learned_counts,
    learning_jobs,
    new_items,
    session_id,
    wait_event,
    wait_learned,
)
from tests.conftest import Api, Graph, RunningServer, user
from tests.openai_stub import OpenAIStub, Reply

Body = dict[str, Any]


@pytest.fixture
def service(
    neo4j_target: Target,
    openai_stub: OpenAIStub,
    graph: Graph,
    tmp_path: Path,
    server: RunningServer,
) -> Iterator[Service]:
    # The in-process server shares the database: paused, it claims none of this service's
    # consolidation runs or learning jobs, so each test sees one process and its restart.
    pools = [server.service.consolidation.pool, server.service.learning.pool]
    for pool in pools:
        pool.paused = True
    running = Service(neo4j_target, openai_stub, tmp_path / "service.log")
    running.start()
    yield running
    running.stop()
    for pool in pools:
        pool.paused = False


@pytest.fixture
def client(service: Service, tokens: Callable[[str, str], str]) -> Iterator[Api]:
    api = Api(service.url, tokens("acme", "ana"))
    yield api
    api.http.close()


def job_states(graph: Graph) -> list[Body]:
    return graph.rows(
        "MATCH (j:LearningJob) RETURN j.id AS id, j.status AS status, j.attempts AS attempts "
        "ORDER BY j.queuedAt, j.id"
    )


def two_sessions_ready(client: Api, openai_stub: OpenAIStub) -> tuple[str, str, str]:
    """An agent with two sessions whose turns are learned by one job: the first session's
    consolidation is held until the second's turn is in. (agent, first, second)"""
    helper_is_stub(client)
    agent = client.agent()["id"]
    first = session_id(client, agent)
    second = session_id(client, agent)
    gate, started = threading.Event(), threading.Event()
    openai_stub.script_for(CONSOLIDATE, Reply(gate=gate, started=started))
    try:
        client.turn(first, user("Always book trains where you can.", id="u-1"))
        wait_event(started, "the first session consolidates")
        client.turn(second, user("Never book night flights.", id="u-1"))
        client.wait_idle(second)
    finally:
        gate.set()
    return agent, first, second


def test_a_learning_job_killed_mid_call_runs_again_once_after_restart(
    service: Service, client: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # A2, S11: durable, claimed with a lease; the restarted service runs the job once more
    helper_is_stub(client)
    agent = client.agent()["id"]
    first = session_id(client, agent)
    second = session_id(client, agent)
    cgate, cstarted = threading.Event(), threading.Event()
    lgate, lstarted = threading.Event(), threading.Event()
    openai_stub.script_for(CONSOLIDATE, Reply(gate=cgate, started=cstarted))
    openai_stub.script_for(
        LEARN,
        answer(change("killed", "This answer is never applied.", ["u-1"]),
               gate=lgate, started=lstarted),
    )
    try:
        client.turn(first, user("Always book trains where you can.", id="u-1"))
        wait_event(cstarted, "the first session consolidates")
        client.turn(second, user("Never book night flights.", id="u-1"))
        client.wait_idle(second)
        cgate.set()
        wait_event(lstarted, "the helper is asked")
        [job] = learning_jobs(client, agent)
        assert job["status"] == "running"
        assert job["attempts"] == 1

        service.kill9()
        # the process is gone mid-call: the job is still marked running, nothing applied
        assert [j["status"] for j in job_states(graph)] == ["running"]
        assert graph.value("MATCH (c:AgentChange) RETURN count(c)") == 0
        assert learned_counts(graph) == {}
        openai_stub.script_for(
            LEARN,
            answer(change("trains", "Book trains where possible.", ["u-1"])),
            answer(change("no-night-flights", "Never book night flights.", ["u-1"])),
        )
        service.start()
    finally:
        cgate.set()
        lgate.set()  # the killed process's request is answered to no one

    [done] = wait_learned(client, agent, [first, second], timeout=60)
    assert done["id"] == job["id"]
    assert done["status"] == "succeeded"
    assert done["attempts"] == 2
    assert sorted(done["sessions"]) == sorted([first, second])
    assert len(openai_stub.requests_for(LEARN)) == 3  # the killed call, then one per session
    # nothing learned twice: each item by exactly one job; one version per session learned
    assert learned_counts(graph) == {"u-1": 2}  # the u-1 of each session, once each
    assert graph.value(
        "MATCH (i:Item)<-[:LEARNED]-(j:LearningJob) WITH i, count(j) AS n WHERE n > 1 "
        "RETURN count(i)"
    ) == 0
    view = agent_memory(client, agent)
    assert view["version"] == 2
    assert sorted(view["entries"]) == ["no-night-flights", "trains"]
    assert [c["maker"] for c in agent_log(client, agent)] == ["consolidation", "consolidation"]
    assert graph.value("MATCH (c:AgentChange) RETURN count(c)") == 2
    assert len(job_states(graph)) == 1


def test_a_job_killed_after_one_session_learns_only_the_rest_after_restart(
    service: Service, client: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # A2, S11: what a job applied before the kill is not learned again
    lgate, lstarted = threading.Event(), threading.Event()
    openai_stub.script_for(
        LEARN,
        answer(change("first-rule", "The first session's rule.", ["u-1"])),
        answer(change("killed", "This answer is never applied.", ["u-1"]),
               gate=lgate, started=lstarted),
    )
    try:
        agent, first, second = two_sessions_ready(client, openai_stub)
        wait_event(lstarted, "the helper is asked about the second session")
        # the first session's part is applied, the second is held
        assert agent_memory(client, agent)["version"] == 1
        [learned_first] = [
            item["content"] for item in new_items(openai_stub.requests_for(LEARN)[0])
        ]

        service.kill9()
        assert [j["status"] for j in job_states(graph)] == ["running"]
        assert learned_counts(graph) == {"u-1": 1}
        openai_stub.script_for(LEARN, answer(change("second-rule", "The second rule.", ["u-1"])))
        service.start()
    finally:
        lgate.set()

    [done] = wait_learned(client, agent, [first, second], timeout=60)
    assert done["status"] == "succeeded"
    assert done["attempts"] == 2
    requests = openai_stub.requests_for(LEARN)
    assert len(requests) == 3
    # the retry asked only about the session not yet learned from
    [retried] = [item["content"] for item in new_items(requests[2])]
    assert retried != learned_first
    assert [item["content"] for item in new_items(requests[1])] == [retried]
    assert learned_counts(graph) == {"u-1": 2}
    view = agent_memory(client, agent)
    assert view["version"] == 2  # exactly the number of sessions learned
    assert sorted(view["entries"]) == ["first-rule", "second-rule"]
    sources = sorted(e["sources"][0]["session"] for e in view["entries"].values())
    assert sources == sorted([first, second])
    assert len(job_states(graph)) == 1


def test_a_restart_without_a_crash_learns_nothing_again(
    service: Service, client: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # A2: a finished job stays finished
    helper_is_stub(client)
    agent = client.agent()["id"]
    sid = session_id(client, agent)
    openai_stub.script_for(LEARN, answer(change("trains", "Book trains.", ["u-1"])))
    client.turn(sid, user("Always book trains.", id="u-1"))
    [before] = wait_learned(client, agent, [sid])
    assert before["status"] == "succeeded"
    service.kill9()
    service.start()
    wait_until("the service answers", lambda: client.get("/readyz").status_code == 200)
    [after] = wait_learned(client, agent, [sid])
    assert after == before
    assert len(openai_stub.requests_for(LEARN)) == 1
    assert agent_memory(client, agent)["version"] == 1


def test_a_learning_job_whose_process_dies_three_times_ends_failed(
    service: Service, client: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # A2, S11: as a run (tests/api/test_crash.py), a learning job may be what ends its process:
    # after its lease ran out three times it ends failed, with its error, rather than being
    # taken up again forever, holding the agent's learning behind it. What it did not learn,
    # the agent's next job learns.
    helper_is_stub(client)
    agent = client.agent()["id"]
    sid = session_id(client, agent)
    held = threading.Event()
    never = answer(change("killed", "This answer is never applied.", ["u-1"]), gate=held)
    openai_stub.script_for(LEARN, never, never, never)
    try:
        client.turn(sid, user("Always book trains where you can.", id="u-1"))
        for asked in (1, 2, 3):
            wait_until(f"the helper is asked {asked} times",
                       lambda: len(openai_stub.requests_for(LEARN)) == asked,  # noqa: B023
                       timeout=60)  # (the lambda is called within the loop's step)
            service.kill9()
            assert [j["status"] for j in job_states(graph)] == ["running"]
            service.start()
        [failed] = wait_learned(client, agent, [sid], timeout=60)
    finally:
        held.set()
    assert failed["status"] == "failed"
    assert failed["attempts"] == 3
    assert failed["error"] == (
        "the learning job was stopped 3 times by the end of the process running it, and is "
        "not run again"
    )
    assert agent_memory(client, agent)["version"] == 0
    assert learned_counts(graph) == {}

    openai_stub.script_for(LEARN, answer(change("trains", "Book trains where you can.", ["u-1"])))
    client.turn(sid, user("And never night flights.", id="u-2"))
    done, _ = wait_learned(client, agent, [sid], jobs=2, timeout=60)
    assert done["status"] == "succeeded"
    assert sorted(agent_memory(client, agent)["entries"]) == ["trains"]
    assert learned_counts(graph) == {"u-1": 1, "u-2": 1}
    assert len(openai_stub.requests_for(LEARN)) == 4
