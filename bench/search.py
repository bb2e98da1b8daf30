"""Search over 100,000 entries: p50/p95 of `GET /v1/search` for a person and for the
org's service token.

Run: `.venv/bin/python -m bench.search [--entries 100000] [--rounds 50]`
It loads the entries in batches straight into the graph (the shape the service's writes leave:
90% session entries in sessions of two persons, a fifth of them replaced by a newer change, and
10% agent entries, some private), with a progress bar, then times searches for a rare word, a
common word, a phrase, a prefix and an exact key, through the served app.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
import uuid
from typing import Any

import httpx
from rich.progress import Progress

from app.cli import _create_token
from app.store.database import Database, Target, Tx
from bench.common import Served, neo4j_target, settings_for, table

WORDS = (
    "budget", "hotel", "train", "flight", "window", "aisle", "seat", "refund", "visa",
    "passport", "museum", "dinner", "lunch", "breakfast", "vegan", "allergy", "nuts",
    "meeting", "client", "invoice", "deadline", "report", "draft", "review", "approval",
    "ticket", "booking", "taxi", "airport", "station", "luggage", "insurance", "receipt",
    "currency", "euro", "dollar", "conference", "keynote", "slides", "demo", "launch",
    "roadmap", "sprint", "release", "bug", "feature", "customer", "support", "contract",
    "renewal", "discount", "loyalty", "upgrade", "lounge", "gate", "delay",
)
SESSION_ENTRIES = 90
BATCH_SESSIONS = 20
AGENT_BATCH = 1000


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(8)) + f" note{n}."


async def load(target: Target, org: str, agent: str, entries: int) -> None:
    db = await Database.connect(target)
    rng = random.Random(14)
    session_total = entries * 9 // 10 // SESSION_ENTRIES
    agent_total = entries - session_total * SESSION_ENTRIES
    try:
        with Progress() as bar:
            task = bar.add_task("loading entries", total=entries)
            for first in range(0, session_total, BATCH_SESSIONS):
                sessions = []
                for s in range(first, min(first + BATCH_SESSIONS, session_total)):
                    sessions.append({
                        "id": f"ses-bench-{org}-{s}",
                        "person": "ana" if s % 2 == 0 else "ben",
                        "entries": [
                            {"id": f"chg-{org}-{s}-{k}", "key": f"k{k}",
                             "content": sentence(rng, s * SESSION_ENTRIES + k),
                             "newer": sentence(rng, -k) if k % 5 == 0 else None}
                            for k in range(SESSION_ENTRIES)
                        ],
                    })

                async def batch(tx: Tx, sessions: list[Any] = sessions) -> None:
                    await tx.rows("bench_load_entries", org=org, agent=agent,
                                  sessions=sessions, at=int(time.time() * 1000))

                await db.write(batch)
                bar.advance(task, len(sessions) * SESSION_ENTRIES)
            for first in range(0, agent_total, AGENT_BATCH):
                rows = []
                for n in range(first, min(first + AGENT_BATCH, agent_total)):
                    owner = ("", "ana", "ben")[n % 3]
                    rows.append({
                        "id": f"ach-{org}-{n}", "key": f"a{n}", "owner": owner,
                        "about": owner or None,
                        "visibility": "private" if owner else "shared",
                        "content": sentence(rng, n),
                    })

                async def agent_batch(tx: Tx, rows: list[Any] = rows) -> None:
                    await tx.rows("bench_load_agent_entries", agent=agent, entries=rows,
                                  at=int(time.time() * 1000))

                await db.write(agent_batch)
                bar.advance(task, len(rows))
    finally:
        await db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    org = f"bench{uuid.uuid4().hex[:8]}"
    with neo4j_target() as target:
        settings = settings_for(target)
        ana = asyncio.run(_create_token(settings, org, "ana"))
        asyncio.run(_create_token(settings, org, "ben"))
        service = asyncio.run(_create_token(settings, org, None, "platform"))
        served = Served(settings, target)
        try:
            agent = httpx.post(f"{served.url}/v1/agents", json={"name": "bench"},
                               headers={"Authorization": f"Bearer {ana}"}).json()["id"]
            asyncio.run(load(target, org, agent, args.entries))
            measure(served.url, {"person": ana, "service token": service}, args.rounds,
                    args.entries)
        finally:
            served.stop()


def measure(url: str, tokens: dict[str, str], rounds: int, entries: int) -> None:
    queries = {"rare word": "note4242", "common word": "budget", "phrase": '"window seat"',
               "prefix": "lugg*", "exact key": "k7"}
    rows: list[tuple[str, list[float]]] = []
    for who, bearer in tokens.items():
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {bearer}"},
                          timeout=120) as http:
            for name, q in queries.items():
                warm = http.get("/v1/search", params={"q": q})  # warm up, plan
                warm.raise_for_status()
                hits = warm.json()["hits"]
                if name == "exact key" and not any(hit["entry"].get("session") for hit in hits):
                    # a fast answer that finds nothing measures nothing: every loaded session
                    # has the key, so its entries must be what a search finds
                    raise SystemExit(f"{who}: {q!r} finds no session entry: {hits[:3]}")
                samples = []
                for _ in range(rounds):
                    start = time.perf_counter()
                    http.get("/v1/search", params={"q": q, "limit": 20}).raise_for_status()
                    samples.append((time.perf_counter() - start) * 1000)
                rows.append((f"{who}: {name}", samples))
    print(table(f"GET /v1/search over {entries:,} entries (limit 20)", rows))


if __name__ == "__main__":
    main()
