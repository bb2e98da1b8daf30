"""At start the service warms up before `/readyz` says ready: while the warm-up runs, `/readyz`
answers 503 `Unavailable`; then 200. The warm-up writes nothing."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from app.api import warmup
from tests.conftest import Graph, RunningServer


def wait_ready(server: RunningServer) -> httpx.Response:
    deadline = time.monotonic() + 120
    while (answer := httpx.get(f"{server.url}/readyz", timeout=30)).status_code != 200:
        assert time.monotonic() < deadline, answer.text
        time.sleep(0.05)
    return answer


def test_readyz_is_503_while_warming_up_and_200_after(
    graph: Graph, start_server: Callable[..., RunningServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    held, entered = threading.Event(), threading.Event()
    warm_up = warmup.warm_up

    async def held_warm_up(*args: Any) -> None:
        entered.set()
        await asyncio.to_thread(held.wait, 60)  # held until the test releases it
        await warm_up(*args)

    monkeypatch.setattr(warmup, "warm_up", held_warm_up)
    server = start_server(ready=False)
    assert entered.wait(60)
    answer = httpx.get(f"{server.url}/readyz", timeout=30)
    assert answer.status_code == 503
    assert answer.json()["_tag"] == "Unavailable"
    assert answer.json()["message"] == "the service is warming up"
    assert httpx.get(f"{server.url}/healthz", timeout=30).status_code == 200  # it is alive
    held.set()
    assert wait_ready(server).json() == {"status": "ready"}
    # the rehearsal's org, agent, session and changes were rolled back
    assert graph.value("MATCH (n) RETURN count(n)") == 0


def test_a_warm_up_that_fails_leaves_the_service_ready(
    graph: Graph, start_server: Callable[..., RunningServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    async def failing(*args: Any) -> None:
        raise RuntimeError("the warm-up broke")

    monkeypatch.setattr(warmup, "warm_up", failing)
    server = start_server(ready=False)
    assert wait_ready(server).json() == {"status": "ready"}
