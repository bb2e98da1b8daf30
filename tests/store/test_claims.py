"""A worker claims a job in two steps: a look names the oldest queued job (`next_run`,
`next_learning_job`), then the claim checks it again under the lock the look took. A job handed
back to the queue (its process died) between the two may be older than the one the look named;
the claim then takes nothing, so a session's runs, and an agent's learning jobs, start in the
order they were queued."""

from __future__ import annotations

from typing import Any

from app.store.catalog import statement
from tests.conftest import Api, Graph, RunningServer, claims_nothing, user

NOW = 10**13  # past every lease


def claim(graph: Graph, name: str, job: str) -> list[dict[str, Any]]:
    """Run the claim statement as a worker sends it, for `job`."""
    return graph.rows(statement(name), job=job, now=NOW, lease=30_000)


def test_a_run_queued_behind_an_older_queued_run_of_its_session_is_not_claimed(
    api: Api, server: RunningServer, graph: Graph
) -> None:
    # S7: one run at a time per session, in the order the turns queued them
    with claims_nothing(server):
        sid = api.session()["session"]["id"]
        api.turn(sid, user("Our budget is 1500 EUR.", id="m-1"))
        api.turn(sid, user("I prefer window seats.", id="m-2"))
        older, later = [row["id"] for row in graph.rows(
            "MATCH (r:Run)-[:FOR_SESSION]->(:Session {id: $id}) "
            "RETURN r.id AS id ORDER BY r.queuedAt, r.id", id=sid)]

        assert claim(graph, "claim_run", later) == []
        assert claim(graph, "claim_run", older) == [{"id": older, "attempt": 1}]
        assert graph.rows(
            "MATCH (r:Run) RETURN r.id AS id, r.status AS status, r.attempts AS attempts "
            "ORDER BY r.queuedAt, r.id"
        ) == [{"id": older, "status": "running", "attempts": 1},
              {"id": later, "status": "queued", "attempts": 0}]
        graph.rows("MATCH (r:Run) DETACH DELETE r")  # nothing left for the server to run


def test_a_learning_job_queued_behind_an_older_queued_job_of_its_agent_is_not_claimed(
    server: RunningServer, graph: Graph,
) -> None:
    # A2: an agent learns one job at a time, in the order its jobs were queued
    with claims_nothing(server):
        graph.rows(
            "CREATE (a:Agent {id: 'agent-1'}) "
            "CREATE (:LearningJob {id: 'job-1', status: 'queued', queuedAt: 1, attempts: 0})"
            "-[:FOR_AGENT]->(a) "
            "CREATE (:LearningJob {id: 'job-2', status: 'queued', queuedAt: 2, attempts: 0})"
            "-[:FOR_AGENT]->(a)"
        )

        assert claim(graph, "claim_learning_job", "job-2") == []
        assert claim(graph, "claim_learning_job", "job-1") == [{"id": "job-1", "attempt": 1}]
        assert graph.rows(
            "MATCH (j:LearningJob) RETURN j.id AS id, j.status AS status ORDER BY j.id"
        ) == [{"id": "job-1", "status": "running"}, {"id": "job-2", "status": "queued"}]
        graph.rows("MATCH (j:LearningJob) DETACH DELETE j")
