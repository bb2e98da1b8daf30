"""At start the service warms up before `/readyz` says ready: while the warm-up runs, `/readyz`
answers 503 `Unavailable`; then 200. The warm-up's org is gone by then, and it calls no model
but the built-in offline one."""

from __future__ import annotations

import asyncio
import logging
import re
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from app.api import warmup
from app.config import Settings
from app.store.catalog import statement
from tests.conftest import Graph, RunningServer
from tests.openai_stub import OpenAIStub

ROUNDS = Settings.model_fields["warmup_rounds"].default  # as served (the suite's servers: 0)


def wait_ready(server: RunningServer) -> httpx.Response:
    deadline = time.monotonic() + 300  # rounds against a cold Neo4j on a loaded machine
    while (answer := httpx.get(f"{server.url}/readyz", timeout=30)).status_code != 200:
        assert time.monotonic() < deadline, answer.text
        time.sleep(0.05)
    return answer


def warmed_up(caplog: pytest.LogCaptureFixture) -> tuple[int, int]:
    """From the warm-up's log line: how many requests it rehearsed, how many nodes of its org
    it deleted."""
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("warmed up")]
    failed = [f"{r.getMessage()}\n{logging.Formatter().formatException(r.exc_info)}"
              for r in caplog.records if r.levelno >= logging.ERROR and r.exc_info]
    assert len(lines) == 1, failed or lines
    found = re.search(r"(\d+) requests rehearsed, (\d+) nodes", lines[0])
    assert found is not None, lines[0]
    return int(found.group(1)), int(found.group(2))


def test_readyz_is_503_while_warming_up_and_200_after(
    graph: Graph, start_server: Callable[..., RunningServer], monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="openbot_memory")
    held, entered = threading.Event(), threading.Event()
    warm_up = warmup.warm_up

    async def held_warm_up(*args: Any) -> None:
        entered.set()
        await asyncio.to_thread(held.wait, 60)  # held until the test releases it
        await warm_up(*args)

    monkeypatch.setattr(warmup, "warm_up", held_warm_up)
    server = start_server(ready=False, warmup_rounds=ROUNDS)
    assert entered.wait(60)
    answer = httpx.get(f"{server.url}/readyz", timeout=30)
    assert answer.status_code == 503
    assert answer.json()["_tag"] == "Unavailable"
    assert answer.json()["message"] == "the service is warming up"
    assert httpx.get(f"{server.url}/healthz", timeout=30).status_code == 200  # it is alive
    held.set()
    assert wait_ready(server).json() == {"status": "ready"}
    # the warm-up committed its org's agents, sessions, turns, runs and learning jobs, and
    # deleted every node of its org before ready
    requests, deleted = warmed_up(caplog)
    assert requests > 0
    assert deleted > 0
    assert graph.value("MATCH (n) RETURN count(n)") == 0


def test_the_warm_up_calls_no_model_but_the_built_in_one(
    graph: Graph, start_server: Callable[..., RunningServer], openai_stub: OpenAIStub,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="openbot_memory")
    asked = len(openai_stub.requests)
    server = start_server(default_model="openai:gpt-4o-mini", warmup_rounds=1)
    assert wait_ready(server).json() == {"status": "ready"}
    assert len(openai_stub.requests) == asked  # the OpenAI-compatible server was not asked
    requests, deleted = warmed_up(caplog)
    assert requests > 0
    assert deleted > 0
    assert graph.value("MATCH (n) RETURN count(n)") == 0


def test_a_warm_up_that_fails_leaves_the_service_ready(
    graph: Graph, start_server: Callable[..., RunningServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    async def failing(*args: Any) -> None:
        raise RuntimeError("the warm-up broke")

    monkeypatch.setattr(warmup, "warm_up", failing)
    server = start_server(ready=False)
    assert wait_ready(server).json() == {"status": "ready"}


def made_org(graph: Graph, org: str, *, warmup: bool, minutes_ago: int) -> None:
    """An org with a person and a token, as a token's creation makes it (by the warm-up with
    `warmup`), made `minutes_ago`."""
    now = int(time.time() * 1000) - minutes_ago * 60_000
    graph.rows(statement("create_principal"), org=org, person="warmup", service=None,
               id=f"tok-{org}", hash=f"hash-{org}", now=now, expiresAt=None,
               defaultModel="builtin", warmup=warmup or None)


def test_a_start_deletes_the_warm_up_orgs_a_stopped_warm_up_left(
    graph: Graph, start_server: Callable[..., RunningServer], caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="openbot_memory")
    made_org(graph, "warmup1a2b", warmup=True, minutes_ago=60)  # a killed warm-up's
    made_org(graph, "warmup3c4d", warmup=True, minutes_ago=0)  # a warm-up under way elsewhere
    # a client's org whose id looks like a warm-up's: org ids are any name, so only the mark
    # made with the org tells a warm-up's
    made_org(graph, "warmup5e6f", warmup=False, minutes_ago=60)
    # a leftover an operator then made a token in (`token create --org warmup7a8b`): the
    # client's token takes the mark away, so the org is the client's now
    made_org(graph, "warmup7a8b", warmup=True, minutes_ago=60)
    graph.rows(statement("create_principal"), org="warmup7a8b", person="ana", service=None,
               id="tok-ana", hash="hash-ana", now=int(time.time() * 1000), expiresAt=None,
               defaultModel="builtin", warmup=None)
    server = start_server(ready=False, warmup_rounds=0)
    assert wait_ready(server).json() == {"status": "ready"}
    assert graph.rows("MATCH (o:Org) RETURN o.id AS id ORDER BY id") == [
        {"id": "warmup3c4d"}, {"id": "warmup5e6f"}, {"id": "warmup7a8b"}]
    # the leftover's person and token went with it; the others' stay
    assert graph.value("MATCH (n:Person|Token) RETURN count(n)") == 8
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("warmed up")]
    assert len(lines) == 1, lines
    assert lines[0].endswith("(1 left by an earlier start)"), lines
