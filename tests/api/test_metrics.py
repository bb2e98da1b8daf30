"""`GET /metrics` after scripted traffic: the counters move as they should."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable

import httpx
from neo4j.exceptions import ServiceUnavailable
from prometheus_client.parser import text_string_to_metric_families
from pydantic import SecretStr
from starlette.testclient import TestClient

from app.api.app import create_app
from app.config import Settings
from app.memory.ids import now_ms
from app.metrics import Metrics
from app.store.database import Database, Target, Tx
from tests.conftest import (
    Api,
    Graph,
    RunningServer,
    assistant,
    flat,
    make_token,
    user,
)
from tests.conftest import test_settings as settings_for
from tests.openai_stub import OpenAIStub, Reply, changes

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(url: str, **headers: str) -> Samples:
    answer = httpx.get(f"{url}/metrics", headers=headers)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain")
    samples: Samples = {}
    for family in text_string_to_metric_families(answer.text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def test_metrics_count_requests_operations_jobs_models_drops_and_conflicts(
    start_server: Callable[..., RunningServer], neo4j_target: Target, graph: Graph,
    openai_stub: OpenAIStub, server: RunningServer,
) -> None:
    # Background jobs run in whichever process claims them: the other server's workers share
    # this Neo4j, so job, model and drop counts are summed over both (its share as a delta).
    shared, server = server, start_server()
    shared_before = scrape(shared.url)
    api = Api(server.url, make_token(neo4j_target, "acme", "ana"))
    agent = api.agent(model="openai:gpt-test")["id"]
    session = api.session(agent)["session"]["id"]
    # Run 1 keeps one change and drops one that cites nothing; run 2's model call fails.
    openai_stub.script_for("memory_changes", changes(
        {"op": "remember", "key": "budget", "content": "The budget is 1500 EUR.", "kind": "fact",
         "sources": ["i-01"]},
        {"op": "remember", "key": "nope", "content": "Unsupported.", "kind": "fact",
         "sources": []},
    ), Reply(status=500))
    api.turn(session, user("Our budget is 1500 EUR."), assistant("Noted."))
    api.wait_idle(session)
    api.turn(session, user("And I like trains."), assistant("Noted."))
    api.wait_idle(session)
    for _ in range(3):
        api.get(f"/v1/sessions/{session}")
    stale = api.post(f"/v1/sessions/{session}/memory", {
        "expected": "v-stale", "revision": 0, "command": {"_tag": "Forget", "key": "budget"}})
    assert stale.status_code == 409
    story = flat(api.graphql("query Story($id: ID!) { session(id: $id) { head } }", id=session))
    assert "errors" not in story
    conflict = flat(api.graphql(
        'mutation Stale($id: ID!) { remember(sessionId: $id, expected: "v-stale", '
        'revision: 0, key: "k", content: "c", kind: FACT) { revision } }', id=session))
    assert conflict["errors"][0]["extensions"]["code"] == "SESSION_CONFLICT"
    agent_stale = api.post(f"/v1/agents/{agent}/memory", {
        "expected": 7, "command": {"_tag": "Forget", "key": "k"}})
    assert agent_stale.status_code == 409
    deadline = time.monotonic() + 20  # learning runs after the runs: wait for it too
    while time.monotonic() < deadline:
        jobs = api.ok(api.get(f"/v1/agents/{agent}/learning"))["jobs"]
        if jobs and all(job["status"] not in ("queued", "running") for job in jobs):
            break
        time.sleep(0.1)

    def summed() -> Samples:
        got = scrape(server.url)
        shared_after = scrape(shared.url)
        jobs = {key for key in shared_after if key[0].startswith((
            "openbot_memory_job", "openbot_memory_model", "openbot_memory_dropped"))}
        for key in jobs:
            got[key] = got.get(key, 0.0) + shared_after[key] - shared_before.get(key, 0.0)
        return got

    # A request is counted as its answer ends, a job just after its outcome is written: a
    # client can be a moment ahead of both, so read until the last of them is counted.
    route, model = "/v1/sessions/{id}", "openai:gpt-test"
    deadline = time.monotonic() + 20
    while True:
        got = summed()
        counted = (
            value(got, "openbot_memory_graphql_operations_total", operation="Stale",
                  outcome="error") == 1
            and value(got, "openbot_memory_job_duration_seconds_count", kind="consolidation",
                      model=model) == 2
            and value(got, "openbot_memory_jobs_finished_total", kind="learning",
                      model="builtin", outcome="succeeded") >= 1
        )
        if counted or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert value(got, "openbot_memory_http_requests_total", route=route, method="GET",
                 status="200") == 3
    assert value(got, "openbot_memory_http_request_duration_seconds_count", route=route,
                 method="GET") == 3
    assert value(got, "openbot_memory_http_requests_total", route="/v1/sessions/{id}/memory",
                 method="POST", status="409") == 1
    assert value(got, "openbot_memory_graphql_operations_total", operation="Story",
                 outcome="ok") == 1
    assert value(got, "openbot_memory_graphql_operations_total", operation="Stale",
                 outcome="error") == 1
    assert value(got, "openbot_memory_conflicts_total", route="/v1/sessions/{id}/memory",
                 error="SessionConflict") == 1
    assert value(got, "openbot_memory_conflicts_total", route="/graphql",
                 error="SessionConflict") == 1
    assert value(got, "openbot_memory_conflicts_total", route="/v1/agents/{id}/memory",
                 error="AgentConflict") == 1
    assert value(got, "openbot_memory_jobs_finished_total", kind="consolidation", model=model,
                 outcome="succeeded") == 1
    assert value(got, "openbot_memory_jobs_finished_total", kind="consolidation", model=model,
                 outcome="failed") == 1
    assert value(got, "openbot_memory_job_duration_seconds_count", kind="consolidation",
                 model=model) == 2
    assert value(got, "openbot_memory_jobs_finished_total", kind="learning", model="builtin",
                 outcome="succeeded") >= 1
    assert value(got, "openbot_memory_model_call_duration_seconds_count", model=model) == 2
    assert value(got, "openbot_memory_model_call_failures_total", model=model,
                 error="InternalServerError") == 1
    assert value(got, "openbot_memory_dropped_changes_total", kind="consolidation",
                 reason="cites no source") == 1
    for kind in ("consolidation", "learning"):
        for status in ("queued", "running"):
            assert value(got, "openbot_memory_jobs", kind=kind, status=status) == 0
    api.http.close()


def test_pending_jobs_are_read_from_the_graph_at_scrape_time(
    server: RunningServer, graph: Graph
) -> None:
    # Jobs of no session and no agent: no worker claims them, so they stay as they are. The
    # running job holds a live lease (as a job running in another process does): without one,
    # this process's learning worker takes it for a dead process's job and queues it again.
    graph.rows("CREATE (:Run {id: 'run-orphan-1', status: 'queued'}), "
               "(:Run {id: 'run-orphan-2', status: 'queued'}), "
               "(:LearningJob {id: 'lrn-orphan', status: 'running', leaseUntil: $until})",
               until=now_ms() + 3_600_000)
    try:
        got = scrape(server.url)
        assert value(got, "openbot_memory_jobs", kind="consolidation", status="queued") == 2
        assert value(got, "openbot_memory_jobs", kind="learning", status="running") == 1
        assert value(got, "openbot_memory_jobs", kind="learning", status="queued") == 0
    finally:
        graph.rows("MATCH (j) WHERE j.id IN ['run-orphan-1', 'run-orphan-2', 'lrn-orphan'] "
                   "DETACH DELETE j")


def from_afar(settings: Settings, target: Target, **headers: str) -> tuple[int, str]:
    """A scrape from a client that is not on loopback. The app runs in Starlette's test client,
    its lifespan and requests on the client's own event loop (never another server's)."""
    app = create_app(settings, target)
    with TestClient(app, base_url="http://memory", client=("203.0.113.9", 4711)) as client:
        answer = client.get("/metrics", headers=headers)
        return answer.status_code, answer.text


def test_metrics_need_loopback_or_the_metrics_token(
    start_server: Callable[..., RunningServer], neo4j_target: Target, openai_stub: OpenAIStub,
    graph: Graph,
) -> None:
    status, text = from_afar(settings_for(openai_stub, neo4j_target), neo4j_target)
    assert status == 403
    assert json.loads(text)["_tag"] == "Forbidden"
    assert "openbot_memory" not in text

    guarded = start_server(metrics_token=SecretStr("scrape-secret"))
    bare = httpx.get(f"{guarded.url}/metrics")
    assert bare.status_code == 401
    wrong = httpx.get(f"{guarded.url}/metrics", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    for refused in (bare, wrong):  # the scheme to sign in with, as every 401 names it
        assert refused.headers["www-authenticate"] == 'Bearer realm="openbot-memory"'
    assert "openbot_memory_http_requests_total" in httpx.get(
        f"{guarded.url}/metrics", headers={"Authorization": "Bearer scrape-secret"}).text
    status, _ = from_afar(guarded.settings, neo4j_target, Authorization="Bearer scrape-secret")
    assert status == 200
    # the header is read as the API reads it: the scheme in any case, spaces around the token
    # ignored; a header that is not ASCII is a wrong token too
    for header in ("bearer scrape-secret", "Bearer  scrape-secret", "BEARER scrape-secret"):
        scraped = httpx.get(f"{guarded.url}/metrics", headers={"Authorization": header})
        assert scraped.status_code == 200, header
    strange = httpx.get(f"{guarded.url}/metrics",
                        headers={b"Authorization": "Bearer scr\u00e4pe".encode("latin-1")})
    assert strange.status_code == 401


def test_transaction_retries_are_counted(neo4j_target: Target, graph: Graph) -> None:
    async def run() -> float:
        db = await Database.connect(neo4j_target)
        attempts = 0

        async def flaky(tx: Tx) -> None:
            nonlocal attempts
            attempts += 1
            if attempts == 1:
                raise ServiceUnavailable("a scripted transient failure")
            await tx.row("ping")

        try:
            await db.write(flaky)
        finally:
            await db.close()
        sample = db.telemetry.metrics.neo4j_retries.labels("write")
        return float(sample._value.get())

    assert asyncio.run(run()) == 1


def test_graphql_operation_names_count_under_a_bounded_set_of_labels(
    start_server: Callable[..., RunningServer], neo4j_target: Target, graph: Graph
) -> None:
    # a client names its operations: past the first 200 names a process sees, a new name
    # counts as `other`, so no client grows the metric's series without end
    server = start_server()
    client = Api(server.url, make_token(neo4j_target, "acme", "ana"))
    try:
        for n in range(210):
            client.ok(client.post("/graphql", {"query": f"query Q{n} {{ __typename }}"}))
    finally:
        client.http.close()
    got = scrape(server.url)
    names = {dict(labels)["operation"] for name, labels in got
             if name == "openbot_memory_graphql_operations_total"}
    assert len(names) == 201
    assert "other" in names
    assert "Q0" in names
    assert "Q209" not in names
    assert value(got, "openbot_memory_graphql_operations_total", operation="other",
                 outcome="ok") == 210 - len([n for n in names if n.startswith("Q")])


def test_model_names_count_under_a_bounded_set_of_labels() -> None:
    # a client names models: past the first 100 names a process sees, a new name counts as
    # `other` in the job and model-call series alike
    metrics = Metrics()
    for n in range(105):
        metrics.job_ended("run", f"openai:m{n}", "succeeded", 0.1, [])
    got = [(family.name, sample.labels) for family in
           text_string_to_metric_families(metrics.text().decode()) for sample in family.samples]
    models = {labels["model"] for name, labels in got if name == "openbot_memory_jobs_finished"}
    assert len(models) == 101
    assert {"openai:m0", "openai:m99", "other"} <= models
    assert "openai:m100" not in models


def test_a_dropped_changes_reason_label_never_quotes_the_model(
    server: RunningServer, neo4j_target: Target, openai_stub: OpenAIStub,
) -> None:
    # a reason quotes what the model answered (repr: in ' or, where that holds a ', in "): its
    # label is the reason up to the quote, whichever quote it is
    # (the server serves other tests too: its counts are read as they move)
    before = value(scrape(server.url), "openbot_memory_dropped_changes_total",
                   kind="consolidation", reason="unknown op")
    api = Api(server.url, make_token(neo4j_target, "acme", "ana"))
    session = api.session(api.agent(model="openai:gpt-test")["id"])["session"]["id"]
    openai_stub.script_for("memory_changes", changes(
        {"op": "Ana's diagnosis", "key": "k", "content": "c", "kind": "fact",
         "sources": ["i-01"]},
        {"op": "plan", "key": "k2", "content": "c", "kind": "fact", "sources": ["i-01"]},
    ))
    api.turn(session, user("Hello."))
    [run] = api.wait_idle(session)
    assert [d["reason"] for d in run["dropped"]] == [
        'unknown op "Ana\'s diagnosis"', "unknown op 'plan'"]
    deadline = time.monotonic() + 20
    while (got := scrape(server.url)) and value(
            got, "openbot_memory_dropped_changes_total", kind="consolidation",
            reason="unknown op") < before + 2:
        assert time.monotonic() < deadline, "the drops were never counted"
        time.sleep(0.1)
    reasons = {dict(labels).get("reason", "") for name, labels in got
               if name == "openbot_memory_dropped_changes_total"}
    assert not [r for r in reasons if "Ana" in r or "diagnosis" in r or "plan" in r], reasons
