"""A GraphQL load generator in a process of its own, so that the client's work never competes
with the service's for the harness process's interpreter: `bench/run` measures our GraphQL and
the @neo4j/graphql peer with it alike.

Run: `python -m bench.load URL REQUESTS CONCURRENCY` with a JSON body {"query", "variables",
"token"} on stdin; prints {"seconds", "latencies_ms", "errors"} as JSON.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

import httpx


async def hammer(url: str, body: dict[str, Any], requests: int, concurrency: int) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {body['token']}"} if body.get("token") else {}
    payload = {"query": body["query"], "variables": body.get("variables", {})}
    latencies: list[float] = []
    errors: list[str] = []
    left = requests
    limits = httpx.Limits(max_connections=concurrency)
    async with httpx.AsyncClient(headers=headers, timeout=120, limits=limits) as http:

        async def worker() -> None:
            nonlocal left
            while left > 0:
                left -= 1
                started = time.perf_counter()
                answer = await http.post(url, json=payload)
                latencies.append((time.perf_counter() - started) * 1000)
                got = answer.json() if answer.status_code == 200 else {"errors": [answer.text]}
                if got.get("errors"):
                    errors.append(json.dumps(got["errors"])[:500])

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        seconds = time.perf_counter() - started
    return {"seconds": seconds, "latencies_ms": latencies, "errors": errors[:3]}


def main() -> None:
    url, requests, concurrency = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    body = json.loads(sys.stdin.read())
    print(json.dumps(asyncio.run(hammer(url, body, requests, concurrency))))


if __name__ == "__main__":
    main()
