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
from tests.conftest import Graph, RunningServer
from tests.openai_stub import OpenAIStub

ROUNDS = Settings.model_fields["warmup_rounds"].default  # as served (the suite's servers: 0)


def wait_ready(server: RunningServer) -> httpx.Response:
    deadline = time.monotonic() + 120
    while (answer := httpx.get(f"{server.url}/readyz", timeout=30)).status_code != 200:
        assert time.monotonic() < deadline, answer.text
        time.sleep(0.05)
    return answer


def warmed_up(caplog: pytest.LogCaptureFixture) -> tuple[int, int]:
    """From the warm-up's log line: how many requests it rehearsed, how many nodes of its org
    it deleted."""
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("warmed up")]
    assert len(lines) == 1, lines
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
