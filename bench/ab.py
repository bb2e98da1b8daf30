"""Two builds of the service side by side: the same requests sent to both, interleaved, on a
shared machine where absolute timings move from one minute to the next.

    # in each checkout, with its own .venv (the script is run by path from this one):
    cd OLD && .venv/bin/python NEW/bench/ab.py serve /tmp/ab-old /tmp/ab-old.json
    cd NEW && .venv/bin/python bench/ab.py serve /tmp/ab-new /tmp/ab-new.json
    # then, from any checkout:
    .venv/bin/python bench/ab.py compare /tmp/ab-old.json /tmp/ab-new.json --rounds 100

`serve` starts a local Neo4j of its own under the state folder, a token, and the checkout's app
served by uvicorn in a process of its own (`bench.serve`), writes how to reach them to the JSON
file and runs until interrupted. `compare` makes a session of 20 entries and one of 200 on each
side, then measures each request kind in rounds, the two sides in turn (A then B, B then A),
each request followed by its side's raw floor (the checkout's own `cypher/bench_*.cypher` on a
session only the floor writes, as `bench/run` does). It prints per kind the p50 of each side,
B over A, the CPU per request of each side's server and Neo4j (from /proc, over the measured
rounds), and each side's ratio over its own floor.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import signal
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import neo4j

NESTED = """query Nested($id: ID!) {
  session(id: $id) { id memory { entries(first: 200) { nodes { key content
    sources { id content turn { id at } } } } } } }"""
KINDS = ("remember", "forget", "configure", "turn", "get_session", "get_memory",
         "get_instructions", "nested", "nested_after_change")
ORG, PERSON = "ab", "alice"


def serve(state: Path, out: Path) -> None:
    """Start this checkout's local Neo4j, a token and its served app; write the side's JSON."""
    sys.path.insert(0, os.getcwd())  # the checkout run from, not the one this file is in
    from app.config import Settings
    from app.store import local_server
    from app.store.database import Target
    from bench.common import Served, settings_for, token

    settings = Settings(state_dir=state)
    server = local_server.start(settings)
    target = Target(server.bolt_uri, server.user, server.password, "neo4j")
    bearer = token(target, ORG, PERSON)
    served = Served(settings_for(target, worker_poll_seconds=3600.0), target)
    out.write_text(json.dumps({
        "url": served.url, "token": bearer, "pid": served.process.pid, "db_pid": server.pid,
        "bolt": server.bolt_uri, "user": server.user, "password": server.password,
        "cypher": str(Path.cwd() / "cypher"),
    }))
    stopped: list[int] = []
    signal.signal(signal.SIGTERM, lambda number, _: stopped.append(number))
    try:
        while not stopped and served.process.poll() is None:
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        served.stop()
        local_server.stop(settings)
        out.unlink(missing_ok=True)


def cpu_ms(pid: int) -> float:
    """User and system CPU of a process (all its threads) so far, in ms."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def now_ms() -> int:
    return int(time.time() * 1000)


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(8)}"


def edit(op: str, key: str, content: str | None, n: int) -> dict[str, Any]:
    """bench_memory_edit's `$edit`, as bench/run sends it."""
    return {
        "itemUid": new_id("itm"), "itemId": f"i-edit-{n}-{uuid.uuid4().hex[:6]}",
        "itemContent": json.dumps({"op": op, "key": key}), "head": new_id("v"),
        "change": new_id("chg"), "op": op, "key": key, "content": content,
        "kind": "fact" if content else None,
        "status": "active" if op == "remember" else "retracted", "at": now_ms(),
    }


class Side:
    """One running service (and its Neo4j) as `serve` wrote it."""

    def __init__(self, name: str, spec: dict[str, Any]) -> None:
        self.name = name
        self.spec = spec
        self.http = aiohttp.ClientSession(
            base_url=spec["url"], headers={"Authorization": f"Bearer {spec['token']}"},
            timeout=aiohttp.ClientTimeout(total=600),
        )
        self.driver = neo4j.AsyncGraphDatabase.driver(
            spec["bolt"], auth=(spec["user"], spec["password"]),
            notifications_min_severity="OFF",
        )
        self.view: dict[str, Any] = {}
        self.big: dict[str, Any] = {}
        self.floor: dict[str, Any] = {}

    async def close(self) -> None:
        await self.http.close()
        await self.driver.close()

    def cpu(self) -> tuple[float, float]:
        return cpu_ms(self.spec["pid"]), cpu_ms(self.spec["db_pid"])

    async def call(self, method: str, path: str, body: object = None) -> tuple[float, Any]:
        started = time.perf_counter()
        async with self.http.request(method, path, json=body) as answer:
            text = await answer.text()
        elapsed = (time.perf_counter() - started) * 1000
        if answer.status >= 400:
            raise RuntimeError(f"{self.name}: {method} {path}: {answer.status} {text[:500]}")
        return elapsed, json.loads(text)

    async def command(
        self, view: dict[str, Any], command: dict[str, Any]
    ) -> tuple[float, dict[str, Any]]:
        session = view["session"]
        return await self.call("POST", f"/v1/sessions/{session['id']}/memory", {
            "expected": session["head"], "revision": session["revision"], "command": command})

    async def session(self, agent: str, entries: int) -> dict[str, Any]:
        """A new session with `generate` off (no consolidation competes) and `entries` facts."""
        _, view = await self.call("POST", "/v1/sessions", {"agent": agent})
        _, view = await self.command(view, {"_tag": "Configure", "generate": False})
        for n in range(entries):
            _, view = await self.command(view, {
                "_tag": "Remember", "key": f"k{n}", "kind": "fact",
                "content": f"Fact {n}: the client's budget is {n * 100} EUR."})
        return view

    async def setup(self) -> None:
        _, agent = await self.call("POST", "/v1/agents", {"name": "ab"})
        self.view = await self.session(agent["id"], 20)
        self.big = await self.session(agent["id"], 200)
        floor = (await self.session(agent["id"], 0))["session"]
        self.floor = {"id": floor["id"], "expected": floor["head"],
                      "revision": floor["revision"], "org": ORG, "person": PERSON}
        for n in range(20):
            await self.raw_write("bench_memory_edit", edit=edit(
                "remember", f"k{n}", f"Fact {n}: the client's budget is {n * 100} EUR.", n))

    async def raw_write(self, name: str, **params: Any) -> float:
        """A floor statement in one write transaction; the floor session follows its row."""
        text = (Path(self.spec["cypher"]) / f"{name}.cypher").read_text()

        async def work(tx: neo4j.AsyncManagedTransaction) -> neo4j.Record | None:
            return await (await tx.run(text, {**self.floor, **params})).single()

        started = time.perf_counter()
        async with self.driver.session() as session:
            row = await session.execute_write(work)
        elapsed = (time.perf_counter() - started) * 1000
        if row is None:
            raise RuntimeError(f"{self.name}: {name} matched nothing")
        self.floor.update(expected=row["head"], revision=row["revision"])
        return elapsed

    async def raw_read(self, name: str) -> float:
        text = (Path(self.spec["cypher"]) / f"{name}.cypher").read_text()
        started = time.perf_counter()
        async with self.driver.session(default_access_mode=neo4j.READ_ACCESS) as session:
            await (await session.run(text, {"id": self.floor["id"], "org": ORG,
                                            "person": PERSON})).data()
        return (time.perf_counter() - started) * 1000

    def sid(self) -> str:
        return str(self.view["session"]["id"])

    # each kind: the service's request, and its floor (None: it has none)

    async def remember(self, n: int) -> float:
        elapsed, self.view = await self.command(self.view, {
            "_tag": "Remember", "key": f"r{n}", "content": f"Note {n}.", "kind": "fact"})
        return elapsed

    async def forget(self, n: int) -> float:
        elapsed, self.view = await self.command(self.view, {"_tag": "Forget", "key": f"r{n}"})
        return elapsed

    async def configure(self, n: int) -> float:
        elapsed, self.view = await self.command(
            self.view, {"_tag": "Configure", "generate": False})
        return elapsed

    async def turn(self, n: int) -> float:
        item = {"type": "message", "role": "user", "content": f"Turn {n}: hello."}
        elapsed, answer = await self.call("POST", f"/v1/sessions/{self.sid()}/turns",
                                          {"items": [item]})
        self.view["session"].update(answer["session"])
        return elapsed

    async def get_session(self, n: int) -> float:
        return (await self.call("GET", f"/v1/sessions/{self.sid()}"))[0]

    async def get_memory(self, n: int) -> float:
        return (await self.call("GET", f"/v1/sessions/{self.sid()}/memory"))[0]

    async def get_instructions(self, n: int) -> float:
        return (await self.call("GET", f"/v1/sessions/{self.sid()}/instructions"))[0]

    async def nested(self, n: int) -> float:
        elapsed, answer = await self.call("POST", "/graphql", {
            "query": NESTED, "variables": {"id": self.big["session"]["id"]}})
        if answer.get("errors"):
            raise RuntimeError(f"{self.name}: {answer['errors']}")
        return elapsed

    async def nested_after_change(self, n: int) -> float:
        """The nested view read right after a change of its session (a Configure)."""
        _, self.big = await self.command(self.big, {"_tag": "Configure", "generate": False})
        return await self.nested(n)

    def floor_of(self, kind: str) -> Callable[[int], Awaitable[float]] | None:
        def write(op: str) -> Callable[[int], Awaitable[float]]:
            async def run(n: int) -> float:
                content = f"Note {n}." if op == "remember" else None
                return await self.raw_write("bench_memory_edit", edit=edit(op, f"r{n}", content, n))
            return run

        async def configure(n: int) -> float:
            return await self.raw_write("bench_configure", generate=False)

        async def turn(n: int) -> float:
            return await self.raw_write("bench_turn", turn={
                "id": new_id("trn"), "at": now_ms(), "head": new_id("v"),
                "item": {"uid": new_id("itm"), "id": f"i-t{n}-{uuid.uuid4().hex[:6]}",
                         "content": f"Turn {n}: hello."}})

        def read(name: str) -> Callable[[int], Awaitable[float]]:
            async def run(n: int) -> float:
                return await self.raw_read(name)
            return run

        return {
            "remember": write("remember"), "forget": write("forget"), "configure": configure,
            "turn": turn, "get_session": read("bench_read_memory"),
            "get_memory": read("bench_read_memory"),
            "get_instructions": read("bench_read_instructions"),
        }.get(kind)


async def compare(a_spec: dict[str, Any], b_spec: dict[str, Any], rounds: int, warmup: int,
                  kinds: tuple[str, ...]) -> None:
    a, b = Side("A", a_spec), Side("B", b_spec)
    try:
        await asyncio.gather(a.setup(), b.setup())
        print(f"{'kind':<20}{'A p50':>9}{'B p50':>9}{'B/A':>7}   CPU per request, A -> B: "
              "server, Neo4j (ms)   over its floor: A, B")
        for kind in kinds:
            served: dict[Side, list[float]] = {a: [], b: []}
            floors: dict[Side, list[float]] = {a: [], b: []}
            cpu: dict[Side, tuple[float, float]] = {}
            for n in range(warmup + rounds):
                if n == warmup:
                    cpu = {side: side.cpu() for side in (a, b)}
                for side in (a, b) if n % 2 == 0 else (b, a):
                    elapsed = await getattr(side, kind)(n)
                    floor = side.floor_of(kind)
                    raw = await floor(n) if floor is not None else None
                    if n >= warmup:
                        served[side].append(elapsed)
                        if raw is not None:
                            floors[side].append(raw)
            used = {side: [(now - then) / rounds for now, then in zip(side.cpu(), cpu[side],
                                                                       strict=True)]
                    for side in (a, b)}
            p50 = {side: statistics.median(served[side]) for side in (a, b)}
            over = "".join(
                f"{p50[side] / statistics.median(floors[side]):>7.2f}x" if floors[side] else ""
                for side in (a, b)
            )
            print(f"{kind:<20}{p50[a]:>9.2f}{p50[b]:>9.2f}{p50[b] / p50[a]:>6.2f}x   "
                  f"{used[a][0]:5.1f} -> {used[b][0]:5.1f}, {used[a][1]:5.1f} -> "
                  f"{used[b][1]:5.1f}        {over}", flush=True)
    finally:
        await a.close()
        await b.close()


def main() -> None:
    parse = argparse.ArgumentParser(prog="bench/ab.py", description=__doc__,
                                    formatter_class=argparse.RawTextHelpFormatter)
    sub = parse.add_subparsers(dest="action", required=True)
    up = sub.add_parser("serve", help="serve this checkout with a Neo4j of its own")
    up.add_argument("state", type=Path, help="the local Neo4j's state folder")
    up.add_argument("out", type=Path, help="where the side's JSON is written")
    ab = sub.add_parser("compare", help="the same requests to two served sides, interleaved")
    ab.add_argument("a", type=Path)
    ab.add_argument("b", type=Path)
    ab.add_argument("--rounds", type=int, default=60)
    ab.add_argument("--warmup", type=int, default=10)
    ab.add_argument("--only", help=f"some kinds: {','.join(KINDS)}")
    args = parse.parse_args()
    if args.action == "serve":
        serve(args.state, args.out)
        return
    kinds = tuple(args.only.split(",")) if args.only else KINDS
    if unknown := set(kinds) - set(KINDS):
        raise SystemExit(f"unknown kinds: {', '.join(sorted(unknown))}")
    asyncio.run(compare(json.loads(args.a.read_text()), json.loads(args.b.read_text()),
                        args.rounds, args.warmup, kinds))


if __name__ == "__main__":
    main()
