"""A turn is recorded without waiting for the model (S7): latency of POST turns, slow model.

Run: `.venv/bin/python -m bench.turn_latency [--turns 40] [--sessions 8] [--delay 2.0]`
It serves the app in-process against the local Neo4j (or `NEO4J_URI`), behind a scripted
OpenAI-compatible model (tests/openai_stub.py) that takes `--delay` seconds per answer, records
`--turns` turns round-robin over `--sessions` sessions, and prints how long each POST took and
how long after it the turn's items were consolidated.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import httpx
from pydantic import SecretStr

from bench import loader
from bench.common import Served, neo4j_target, settings_for, table, token
from tests.openai_stub import OpenAIStub, Reply


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--delay", type=float, default=2.0, help="seconds the model takes")
    parser.add_argument("--workers", type=int, default=4, help="consolidation workers")
    args = parser.parse_args()

    stub = OpenAIStub()
    # Every answer is slow; more than enough of them for every run the turns can cause.
    stub.script(*[Reply(delay=args.delay) for _ in range(args.turns * 2)])
    try:
        with neo4j_target() as target:
            settings = settings_for(
                target,
                openai_base_url=stub.url,
                openai_api_key=SecretStr("bench"),
                model_timeout_seconds=args.delay + 30,
                model_retries=0,
                workers=args.workers,
            )
            served = Served(settings, target)
            try:
                run(served.url, token(target, "bench", "ana"), args)
            finally:
                served.stop()
    finally:
        stub.close()
    print(f"model requests: {len(stub.requests)}")


def run(url: str, bearer: str, args: argparse.Namespace) -> None:
    with loader.progress() as bar:
        measure(url, bearer, args, loader.reporter(bar))


def measure(
    url: str, bearer: str, args: argparse.Namespace, progress: Callable[[str, int, int], None]
) -> None:
    http = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {bearer}"}, timeout=120)
    agent = http.post("/v1/agents", json={"name": "latency bench"}).json()["id"]
    sessions = [
        http.post("/v1/sessions", json={"agent": agent, "model": "openai:slow"}).json()["session"][
            "id"
        ]
        for _ in range(args.sessions)
    ]

    # One unmeasured turn first: a new server's first request waits for Neo4j to plan queries.
    warm = http.post("/v1/sessions", json={"agent": agent, "model": "builtin"}).json()
    http.post(
        f"/v1/sessions/{warm['session']['id']}/turns",
        json={"items": [{"type": "message", "role": "user", "content": "warm-up"}]},
    ).raise_for_status()

    posted_at: dict[tuple[str, str], float] = {}  # (session, item id) -> epoch ms of the POST
    post_ms: list[float] = []
    for n in range(args.turns):
        sid = sessions[n % len(sessions)]
        items = [
            {"type": "message", "role": "user", "content": f"Turn {n}: our budget is {n} EUR."},
            {"type": "message", "role": "assistant", "content": "Noted."},
        ]
        sent = time.time() * 1000
        started = time.perf_counter()
        answer = http.post(f"/v1/sessions/{sid}/turns", json={"items": items})
        post_ms.append((time.perf_counter() - started) * 1000)
        answer.raise_for_status()
        for item_id in answer.json()["turn"]["items"]:
            posted_at[(sid, item_id)] = sent
        progress("turns", n + 1, args.turns)

    runs = wait_idle(http, sessions, timeout=args.turns * args.delay + 120)
    consolidated_ms: list[float] = []
    failed = 0
    for sid, session_runs in runs.items():
        for item_run in session_runs:
            if item_run["status"] != "succeeded":
                failed += 1
                continue
            for item_id in item_run["read"]:
                consolidated_ms.append(item_run["finishedAt"] - posted_at[(sid, item_id)])
    http.close()

    print(
        table(
            f"{args.turns} turns over {args.sessions} sessions, model answers in "
            f"{args.delay:.1f} s, {args.workers} workers",
            [
                ("POST /v1/sessions/:id/turns", post_ms),
                ("turn posted -> its items consolidated", consolidated_ms),
            ],
        )
    )
    print(f"runs: {sum(len(r) for r in runs.values())}, failed: {failed}")
    print("POST ms in order: " + " ".join(f"{ms:.0f}" for ms in post_ms))
    slower = sum(1 for ms in post_ms if ms >= args.delay * 1000)
    print(
        f"{slower} of {len(post_ms)} POSTs took as long as one model answer "
        f"({args.delay * 1000:.0f} ms): recording a turn does not wait for the model"
        if slower == 0
        else f"{slower} of {len(post_ms)} POSTs took as long as one model answer"
    )


def wait_idle(
    http: httpx.Client, sessions: list[str], timeout: float
) -> dict[str, list[dict[str, Any]]]:
    """Each session's runs once none is queued or running."""
    deadline = time.monotonic() + timeout
    while True:
        runs: dict[str, list[dict[str, Any]]] = {
            sid: http.get(f"/v1/sessions/{sid}/runs").json()["runs"] for sid in sessions
        }
        pending = sum(1 for rs in runs.values() for r in rs if r["status"] in ("queued", "running"))
        if pending == 0:
            return runs
        if time.monotonic() > deadline:
            raise SystemExit(f"{pending} runs still pending after {timeout:.0f} s")
        time.sleep(0.1)


if __name__ == "__main__":
    main()
