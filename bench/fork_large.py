"""Fork a session with 10,000 items and 1,000 entries (issue: forks answer in under a second).

Run: `.venv/bin/python -m bench.fork_large [--items 10000] [--entries 1000] [--forks 5]`
It builds the session through the public API (turns of 100 items, then one Remember per entry),
then times `POST /v1/sessions/:id/fork` at the head and at an older version, and a read of the
forked session, and prints a table.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import httpx

from bench import loader
from bench.common import Served, neo4j_target, settings_for, table, token


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--entries", type=int, default=1_000)
    parser.add_argument("--forks", type=int, default=10)
    parser.add_argument(
        "--warmup", type=int, default=1, help="unmeasured rounds first (Neo4j plans queries)"
    )
    args = parser.parse_args()

    with neo4j_target() as target:
        served = Served(settings_for(target), target)
        try:
            run(
                served.url,
                token(target, "bench", "ana"),
                args.items,
                args.entries,
                args.forks,
                args.warmup,
            )
        finally:
            served.stop()


def run(url: str, bearer: str, items: int, entries: int, forks: int, warmup: int) -> None:
    with loader.progress() as bar:
        measure(url, bearer, items, entries, forks, warmup, loader.reporter(bar))


def measure(
    url: str, bearer: str, items: int, entries: int, forks: int, warmup: int,
    progress: Callable[[str, int, int], None],
) -> None:
    http = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {bearer}"}, timeout=120)
    agent = http.post("/v1/agents", json={"name": "bench"}).json()["id"]
    session = http.post("/v1/sessions", json={"agent": agent}).json()["session"]
    sid = session["id"]
    http.post(
        f"/v1/sessions/{sid}/memory",
        json={
            "expected": session["head"],
            "revision": session["revision"],
            "command": {"_tag": "Configure", "generate": False},
        },
    ).raise_for_status()
    turn_items = items - entries  # each Remember adds a memory-edit item too
    for start in range(0, turn_items, 100):
        batch = [
            {"type": "message", "role": "user" if n % 2 else "assistant", "content": f"m{n}"}
            for n in range(start, min(start + 100, turn_items))
        ]
        answer = http.post(f"/v1/sessions/{sid}/turns", json={"items": batch})
        answer.raise_for_status()
        progress("turns", min(start + 100, turn_items), turn_items)
    head, revision = answer.json()["session"]["head"], answer.json()["session"]["revision"]
    middle = head
    for n in range(entries):
        command = {"_tag": "Remember", "key": f"k{n}", "content": f"fact {n}", "kind": "fact"}
        response = http.post(
            f"/v1/sessions/{sid}/memory",
            json={"expected": head, "revision": revision, "command": command},
        )
        response.raise_for_status()
        head, revision = response.json()["session"]["head"], response.json()["session"]["revision"]
        if n == entries // 2:
            middle = head
        progress("remembers", n + 1, entries)

    def timed(method: str, path: str, **kwargs: object) -> tuple[float, httpx.Response]:
        started = time.perf_counter()
        response = http.request(method, path, **kwargs)  # type: ignore[arg-type]
        response.raise_for_status()
        return (time.perf_counter() - started) * 1000, response

    at_head: list[float] = []
    at_middle: list[float] = []
    reads: list[float] = []
    for n in range(warmup + forks):
        elapsed, answer = timed("POST", f"/v1/sessions/{sid}/fork", json={})
        if n < warmup:
            timed("POST", f"/v1/sessions/{sid}/fork", json={"at": middle})
            timed("GET", f"/v1/sessions/{answer.json()['session']['id']}")
            continue
        at_head.append(elapsed)
        assert len(answer.json()["memory"]["entries"]) == entries
        elapsed, answer = timed("POST", f"/v1/sessions/{sid}/fork", json={"at": middle})
        at_middle.append(elapsed)
        elapsed, _ = timed("GET", f"/v1/sessions/{answer.json()['session']['id']}")
        reads.append(elapsed)
        progress("forks", n + 1 - warmup, forks)
    print(
        table(
            f"Fork of a session with {items} items and {entries} entries "
            f"({warmup} warm-up round{'s' if warmup != 1 else ''} not counted)",
            [
                ("POST fork (at head)", at_head),
                (f"POST fork (at version {entries // 2 + 1})", at_middle),
                ("GET forked session view", reads),
            ],
        )
    )


if __name__ == "__main__":
    main()
