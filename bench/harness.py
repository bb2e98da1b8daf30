"""`bench/run`: every benchmark figure in one run, printed as one table of ratios measured side
by side (each against its baseline in the same run, never against a number from elsewhere).

- Commands and reads on one session, through the REST API, against the least graph work each
  needs sent raw from the async driver in one transaction (cypher/bench_*.cypher), round by
  round in turn with the service.
- Growth: one session grown in 4-item turns through the sizes of `--items`, inside a graph of
  `--graph-items` items (other sessions); and sessions with `--entries` entries plus agent
  memory. Each size against the smallest.
- The nested session view (session -> entries -> sources -> items -> turn) over our GraphQL
  and over @neo4j/graphql with Apollo Server on the same graph: throughput at a fixed
  concurrency and statements per request.
- Consolidation with the built-in model: turn to applied, minus the model's own time; and
  turns consolidated per minute, sustained.

The large graphs are loaded through the service's own statements (bench/loader.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import platform
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, cast

import aiohttp
import httpx
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from app.config import Settings
from app.domain.items import item_id
from app.errors import SetupError
from app.memory.ids import new_head, new_id, now_ms
from app.store import local_server
from app.store.database import Database, Target
from bench import loader
from bench.common import ROOT, Served, neo4j_target, percentile, settings_for
from bench.loader import Branch

BACKGROUND_SESSION_ITEMS = 10_000
BACKGROUND_TURN_ITEMS = 100


@dataclass(frozen=True)
class Sizes:
    """How big and how long; the defaults are the issue's."""

    items: tuple[int, ...] = (1_000, 10_000, 100_000)
    graph_items: int = 1_000_000
    entries: tuple[int, ...] = (100, 1_000, 100_000)
    agent_entries: int = 1_000
    rounds: int = 50
    nested_entries: int = 200
    nested_requests: int = 400
    concurrency: int = 8
    latency_rounds: int = 30
    sustain_seconds: float = 60.0
    sustain_sessions: int = 16
    command_entries: int = 20  # entries of the sessions that commands are timed on
    warmup: int = 3  # unmeasured rounds first: Neo4j plans each statement on its first run
    # The bench's Neo4j starts fresh, and its JIT takes a few hundred requests to warm: turn to
    # applied settled at about the 20th round, the nested view's CPU per request after ~200.
    latency_warmup: int = 20
    nested_warmup: int = 200  # requests per side, unmeasured, before the alternating rounds
    view_entries: int = 10_000  # the large view: GET memory against the raw read
    provenance_entries: int = 100  # the session whose story, supports and shown are read


QUICK = Sizes(
    items=(1_000, 4_000), graph_items=20_000, entries=(100, 1_000), agent_entries=100,
    rounds=10, nested_requests=40, latency_rounds=5, sustain_seconds=10.0, latency_warmup=3,
    nested_warmup=16, view_entries=1_000,
)


@dataclass(frozen=True)
class Row:
    """One line of the table: a measure at a size, against its baseline measured alongside."""

    section: str
    measure: str
    size: str
    p50: float | None = None  # ms
    p95: float | None = None
    against: str = ""
    base_p50: float | None = None
    ratio: float | None = None
    goal: str = ""
    met: bool | None = None
    figure: str = ""  # a figure that is not a latency: requests/s, statements, turns/min


COLUMNS = ("section", "measure", "size", "p50 ms", "p95 ms", "against", "its p50 ms", "ratio",
           "goal", "met", "figure")


def latency_row(
    section: str, measure: str, size: str, samples: Sequence[float],
    against: str = "", base: Sequence[float] = (), limit: float | None = None,
) -> Row:
    """p50/p95 of `samples`, and its p50 over `base`'s p50 with the goal ratio ≤ `limit`."""
    p50 = percentile(samples, 0.5)
    if not base:
        return Row(section, measure, size, p50, percentile(samples, 0.95), against)
    base_p50 = percentile(base, 0.5)
    ratio = p50 / base_p50 if base_p50 > 0 else None
    return Row(
        section, measure, size, p50, percentile(samples, 0.95), against, base_p50, ratio,
        f"≤ {limit:g}x" if limit else "",
        None if limit is None or ratio is None else ratio <= limit,
    )


def render(rows: Sequence[Row], title: str) -> Table:
    table = Table(title=title, title_justify="left")
    for name in COLUMNS:
        table.add_column(name, justify="left" if name in ("section", "measure", "against",
                                                          "goal", "figure") else "right")

    def ms(value: float | None) -> str:
        return "" if value is None else f"{value:.1f}"

    for row in rows:
        table.add_row(
            row.section, row.measure, row.size, ms(row.p50), ms(row.p95), row.against,
            ms(row.base_p50), "" if row.ratio is None else f"{row.ratio:.2f}x", row.goal,
            {True: "yes", False: "NO", None: ""}[row.met], row.figure,
        )
    return table


def quiet(served: Served) -> Served:
    """Warnings only: a line per request (the app's, and the rich handler that the MCP SDK
    installs on the root logger) would bury the progress bars and the table."""
    logging.getLogger().setLevel(logging.WARNING)
    return served


class Api:
    """The service's REST API as one person of the bench's org, each call timed. The client
    is aiohttp: what is timed is the service, and a command's floor has no HTTP client at all.
    httpx spent about 1.5 ms of its own per request here, aiohttp 0.7 and a bare socket 0.4
    (GET /healthz, p50, side by side), of a command's 5 to 20 ms."""

    def __init__(self, url: str, bearer: str) -> None:
        self.url = url
        self.bearer = bearer
        self._http: aiohttp.ClientSession | None = None

    @property
    def http(self) -> aiohttp.ClientSession:
        # made on first use: an aiohttp session belongs to the event loop it was made in
        if self._http is None:
            self._http = aiohttp.ClientSession(
                base_url=self.url, headers={"Authorization": f"Bearer {self.bearer}"},
                timeout=aiohttp.ClientTimeout(total=600),
            )
        return self._http

    async def call(
        self, method: str, path: str, body: object = None, params: dict[str, Any] | None = None
    ) -> tuple[float, Any]:
        started = time.perf_counter()
        async with self.http.request(method, path, json=body, params=params) as answer:
            text = await answer.text()
        elapsed = (time.perf_counter() - started) * 1000
        if answer.status >= 400:
            raise RuntimeError(f"{method} {path}: {answer.status} {text[:500]}")
        return elapsed, json.loads(text)

    async def agent(self, name: str) -> str:
        agent: str = (await self.call("POST", "/v1/agents", {"name": name}))[1]["id"]
        return agent

    async def quiet_session(self, agent: str) -> dict[str, Any]:
        """A new session with `generate` off: no consolidation competes with what is timed."""
        view = (await self.call("POST", "/v1/sessions", {"agent": agent}))[1]
        return await self.command(view, {"_tag": "Configure", "generate": False})

    async def command(self, view: dict[str, Any], command: dict[str, Any]) -> dict[str, Any]:
        return (await self.timed_command(view, command))[1]

    async def timed_command(
        self, view: dict[str, Any], command: dict[str, Any]
    ) -> tuple[float, dict[str, Any]]:
        session = view["session"]
        body = {"expected": session["head"], "revision": session["revision"],
                "command": command}
        elapsed, answer = await self.call("POST", f"/v1/sessions/{session['id']}/memory", body)
        return elapsed, answer

    async def graphql(self, query: str, **variables: Any) -> Any:
        _, answer = await self.call("POST", "/graphql", {"query": query, "variables": variables})
        if answer.get("errors"):
            raise RuntimeError(f"GraphQL: {answer['errors']}")
        return answer["data"]

    async def close(self) -> None:
        if self._http is not None:
            await self._http.close()


@dataclass
class Context:
    """What the measures share: the served app, the harness's own driver and a progress bar."""

    target: Target
    served: Served
    api: Api
    db: Database
    org: str
    person: str
    bar: Progress
    peer: bool = True
    notes: list[str] = field(default_factory=list)
    loaded_items: int = 0  # items of sessions loaded so far, of every section

    async def timed_raw(self, name: str, **params: Any) -> tuple[float, dict[str, Any]]:
        """One floor statement in one write transaction from the async driver."""
        started = time.perf_counter()
        row = await self.db.write(lambda tx: tx.row(name, **params))
        elapsed = (time.perf_counter() - started) * 1000
        if row is None:
            raise RuntimeError(f"{name} matched nothing (head or revision off?)")
        return elapsed, row

    def task(self, label: str, total: int) -> Callable[[int], None]:
        task = self.bar.add_task(label, total=total)
        return lambda n: self.bar.advance(task, n)


# --- commands and reads against the raw floor --------------------------------------------


@dataclass
class Floor:
    """A session that only the floor statements write: its head and revision."""

    session: str
    head: str
    revision: int

    def follow(self, row: dict[str, Any]) -> None:
        self.head, self.revision = row["head"], row["revision"]


def edit_param(op: str, key: str, content: str | None, n: int) -> dict[str, Any]:
    return {
        "itemUid": new_id("itm"), "itemId": f"i-edit-{n}-{uuid.uuid4().hex[:6]}",
        "itemContent": json.dumps({"op": op, "key": key}), "head": new_head(),
        "change": new_id("chg"), "op": op, "key": key, "content": content,
        "kind": "fact" if content else None,
        "status": "active" if op == "remember" else "retracted", "at": now_ms(),
    }


async def command_rows(ctx: Context, sizes: Sizes) -> list[Row]:
    """Remember, Forget, Configure, a 1-item turn and the three reads, round by round on a
    service session, on a floor session with the same entries (the current statements,
    cypher/bench_*.cypher) and on a third with the minimal write (bench_minimal_edit): every
    command's ratio is read against both floors, measured in the same rounds."""
    api, scope = ctx.api, {"org": ctx.org, "person": ctx.person}
    agent = await api.agent("bench commands")
    ours = await api.quiet_session(agent)
    mine = await api.quiet_session(agent)
    least = await api.quiet_session(agent)
    floor = Floor(mine["session"]["id"], mine["session"]["head"], mine["session"]["revision"])
    minimal = Floor(least["session"]["id"], least["session"]["head"],
                    least["session"]["revision"])
    sid = ours["session"]["id"]
    rounds, warmup = sizes.rounds, sizes.warmup
    for n in range(sizes.command_entries):
        content = f"Fact {n}: the client's budget is {n * 100} EUR."
        ours = await api.command(ours, {"_tag": "Remember", "key": f"k{n}", "content": content,
                                        "kind": "fact"})
        _, row = await ctx.timed_raw(
            "bench_memory_edit", id=floor.session, expected=floor.head,
            revision=floor.revision, edit=edit_param("remember", f"k{n}", content, n), **scope,
        )
        floor.follow(row)
        _, row = await ctx.timed_raw(
            "bench_minimal_edit", id=minimal.session, expected=minimal.head,
            revision=minimal.revision, edit=edit_param("remember", f"k{n}", content, n),
            person=ctx.person,
        )
        minimal.follow(row)

    samples: dict[str, tuple[list[float], list[float], list[float]]] = {}
    advance = ctx.task("commands and reads", (rounds + warmup) * 7)

    async def least_write(n: int) -> float:
        """The minimal write, a Remember and a Forget in turn (both keep the entry)."""
        op = "remember" if n % 2 == 0 else "forget"
        content = f"Note {n}." if op == "remember" else None
        elapsed, row = await ctx.timed_raw(
            "bench_minimal_edit", id=minimal.session, expected=minimal.head,
            revision=minimal.revision, edit=edit_param(op, f"m{n // 2}", content, n),
            person=ctx.person,
        )
        minimal.follow(row)
        return elapsed

    async def measure(
        name: str,
        service: Callable[[int], Awaitable[float]],
        raw: Callable[[int], Awaitable[float]],
    ) -> None:
        mine_ms: list[float] = []
        raw_ms: list[float] = []
        least_ms: list[float] = []
        for n in range(warmup + rounds):
            # A write that makes a change leaves Neo4j work to do after it (its full-text
            # indexes refresh in the background): each is waited for, unmeasured, so that no
            # measure shares the machine with the one before it. Each round starts with another
            # of the three.
            timed: dict[str, float] = {}
            sides = [("ours", service), ("raw", raw), ("least", least_write)]
            for side, run in sides[n % 3:] + sides[: n % 3]:
                timed[side] = await run(n)
                await ctx.db.read(lambda tx: tx.rows("bench_await_indexes"))
            ours_elapsed, raw_elapsed, least_elapsed = timed["ours"], timed["raw"], timed["least"]
            if n >= warmup:
                mine_ms.append(ours_elapsed)
                raw_ms.append(raw_elapsed)
                least_ms.append(least_elapsed)
            advance(1)
        samples[name] = (mine_ms, raw_ms, least_ms)

    async def remember(n: int) -> float:
        nonlocal ours
        elapsed, ours = await api.timed_command(
            ours, {"_tag": "Remember", "key": f"r{n}", "content": f"Note {n}.", "kind": "fact"}
        )
        return elapsed

    async def remember_raw(n: int) -> float:
        elapsed, row = await ctx.timed_raw(
            "bench_memory_edit", id=floor.session, expected=floor.head, revision=floor.revision,
            edit=edit_param("remember", f"r{n}", f"Note {n}.", n), **scope,
        )
        floor.follow(row)
        return elapsed

    async def forget(n: int) -> float:
        nonlocal ours
        elapsed, ours = await api.timed_command(ours, {"_tag": "Forget", "key": f"r{n}"})
        return elapsed

    async def forget_raw(n: int) -> float:
        elapsed, row = await ctx.timed_raw(
            "bench_memory_edit", id=floor.session, expected=floor.head, revision=floor.revision,
            edit=edit_param("forget", f"r{n}", None, n), **scope,
        )
        floor.follow(row)
        return elapsed

    async def configure(n: int) -> float:
        nonlocal ours
        elapsed, ours = await api.timed_command(ours, {"_tag": "Configure", "generate": False})
        return elapsed

    async def configure_raw(n: int) -> float:
        elapsed, row = await ctx.timed_raw(
            "bench_configure", id=floor.session, expected=floor.head, revision=floor.revision,
            generate=False, org=ctx.org,
        )
        floor.follow(row)
        return elapsed

    async def turn(n: int) -> float:
        nonlocal ours
        item = {"type": "message", "role": "user", "content": f"Turn {n}: hello."}
        elapsed, answer = await api.call("POST", f"/v1/sessions/{sid}/turns", {"items": [item]})
        ours["session"].update(answer["session"])
        return elapsed

    async def turn_raw(n: int) -> float:
        param = {"id": new_id("trn"), "at": now_ms(), "head": new_head(),
                 "item": {"uid": new_id("itm"), "id": f"i-t{n}-{uuid.uuid4().hex[:6]}",
                          "content": f"Turn {n}: hello."}}
        elapsed, row = await ctx.timed_raw("bench_turn", id=floor.session, turn=param, **scope)
        floor.follow(row)
        return elapsed

    def read(path: str) -> Callable[[int], Awaitable[float]]:
        async def get(n: int) -> float:
            return (await api.call("GET", path))[0]

        return get

    def read_raw(name: str) -> Callable[[int], Awaitable[float]]:
        async def run(n: int) -> float:
            started = time.perf_counter()
            await ctx.db.read(lambda tx: tx.rows(name, id=floor.session, **scope))
            return (time.perf_counter() - started) * 1000

        return run

    await measure("Remember", remember, remember_raw)
    await measure("Forget", forget, forget_raw)
    await measure("Configure", configure, configure_raw)
    await measure("POST turn, 1 item", turn, turn_raw)
    await measure("GET session", read(f"/v1/sessions/{sid}"), read_raw("bench_read_memory"))
    await measure("GET memory", read(f"/v1/sessions/{sid}/memory"),
                  read_raw("bench_read_memory"))
    await measure("GET instructions", read(f"/v1/sessions/{sid}/instructions"),
                  read_raw("bench_read_instructions"))
    limits = {"Remember": 1.5, "Forget": 1.5, "Configure": 1.5, "POST turn, 1 item": 2.0}
    # against the minimal write: the goals a write must meet; a read's ratio is only shown
    least_limits = {"Remember": 1.5, "Forget": 1.5, "POST turn, 1 item": 1.5}
    size = f"{sizes.command_entries} entries"
    rows = []
    for name, (mine_ms, raw_ms, least_ms) in samples.items():
        rows.append(latency_row("command vs raw", name, size, mine_ms, "raw floor", raw_ms,
                                limits.get(name)))
        rows.append(latency_row("command vs minimal", name, size, mine_ms, "minimal write",
                                least_ms, least_limits.get(name)))
    remember_raw_ms, least_ms = samples["Remember"][1], samples["Remember"][2]
    rows.append(latency_row("command vs minimal", "raw floor: bench_memory_edit", size,
                            remember_raw_ms, "minimal write", least_ms))
    return rows


# --- a large view: GET memory against the raw read of the same rows ----------------------


async def view_rows(ctx: Context, sizes: Sizes) -> list[Row]:
    """GET memory of a session with `sizes.view_entries` entries against the raw read of the
    same rows (bench_read_memory), round by round."""
    count = sizes.view_entries
    agent = await ctx.api.agent(f"bench view {count}")
    view = await ctx.api.quiet_session(agent)
    branch = await organic_branch(ctx, view)
    advance = ctx.task(f"loading {count:,} view entries", count * 2)
    await loader.add_turns(ctx.db, branch, count, 4, advance, keep_uids=True)
    await loader.add_entries(ctx.db, branch, count, 1, advance)
    _, got = await ctx.api.call("GET", f"/v1/sessions/{branch.session}")
    branch.head = got["session"]["head"]
    await verify_loaded(ctx, view, branch, entries=count)
    path, scope = f"/v1/sessions/{branch.session}/memory", {"org": ctx.org, "person": ctx.person}
    served: list[float] = []
    raw: list[float] = []
    measured = ctx.task(f"GET memory at {count:,} entries", sizes.warmup + sizes.rounds)
    for n in range(sizes.warmup + sizes.rounds):
        elapsed, _ = await ctx.api.call("GET", path)
        started = time.perf_counter()
        await ctx.db.read(lambda tx: tx.rows("bench_read_memory", id=branch.session, **scope))
        if n >= sizes.warmup:
            served.append(elapsed)
            raw.append((time.perf_counter() - started) * 1000)
        measured(1)
    return [latency_row("view", "GET memory", f"{count:,} entries", served,
                        "raw read, same rows", raw, 2.0)]


# --- provenance on a large graph ---------------------------------------------------------


STORY = """query Story($id: ID!, $key: String!) {
  session(id: $id) { memory { entry(key: $key) { story { maker person runId copied content
    change { id } cites { turnId sessionId item { id } } } } } } }"""
SUPPORTS = """query Supports($id: ID!, $key: String!) {
  session(id: $id) { memory { entry(key: $key) { sources { id
    supports { session { key changeId } agent { key changeId } } } } } } }"""
SHOWN = """query Shown($id: ID!, $after: String) {
  session(id: $id) { turns(first: 1, after: $after) { nodes { id
    shown { session { key changeId } agent { key changeId } } } } } }"""


async def provenance_rows(ctx: Context, sizes: Sizes) -> list[Row]:
    """An entry's story, what cites an item and what a turn was shown, over GraphQL, on a
    session of `sizes.provenance_entries` entries in a graph of `sizes.graph_items` items
    (what the growth section loaded counts toward it)."""
    await background(ctx, sizes.graph_items - ctx.loaded_items)
    count = sizes.provenance_entries
    agent = await ctx.api.agent("bench provenance")
    view = await ctx.api.quiet_session(agent)
    branch = await organic_branch(ctx, view)
    advance = ctx.task(f"loading {count:,} provenance entries", count * 2)
    await loader.add_turns(ctx.db, branch, count, 4, advance, keep_uids=True)
    await loader.add_entries(ctx.db, branch, count, 1, advance)
    _, got = await ctx.api.call("GET", f"/v1/sessions/{branch.session}")
    branch.head = got["session"]["head"]
    await verify_loaded(ctx, view, branch, entries=count)  # its turn is shown every entry
    sid = branch.session
    for n in range(3):  # a story of a few steps: the model's change, then a person's
        view = await ctx.api.command(view, {"_tag": "Remember", "key": "k0",
                                            "content": f"Fact 0, edited {n}.", "kind": "fact"})
    turns = (await ctx.api.graphql(
        "query T($id: ID!) { session(id: $id) { turns(first: 200) { edges { cursor } } } }",
        id=sid))["session"]["turns"]["edges"]
    before_last = turns[-2]["cursor"] if len(turns) > 1 else None
    queries: dict[str, tuple[str, dict[str, Any]]] = {
        "entry story": (STORY, {"id": sid, "key": "k0"}),
        "item supports": (SUPPORTS, {"id": sid, "key": f"k{count // 2}"}),
        "turn shown": (SHOWN, {"id": sid, "after": before_last}),
    }
    rows = []
    size = f"{max(sizes.graph_items, ctx.loaded_items):,} items"
    measured = ctx.task("provenance", len(queries) * (sizes.warmup + sizes.rounds))
    for name, (query, variables) in queries.items():
        samples = []
        for n in range(sizes.warmup + sizes.rounds):
            started = time.perf_counter()
            await ctx.api.graphql(query, **variables)
            if n >= sizes.warmup:
                samples.append((time.perf_counter() - started) * 1000)
            measured(1)
        row = latency_row("provenance", name, size, samples)
        p95 = row.p95 or 0.0
        rows.append(replace(row, goal="p95 ≤ 20 ms", met=p95 <= 20))
    return rows


# --- growth ------------------------------------------------------------------------------


HOT_PATHS = ("GET memory", "GET instructions", "Remember", "POST turn")


@dataclass
class Measured:
    """Samples of each hot path at one size, and what failed instead (its error)."""

    samples: dict[str, list[float]] = field(
        default_factory=lambda: {name: [] for name in HOT_PATHS})
    failed: dict[str, str] = field(default_factory=dict)


async def hot_paths(
    ctx: Context, views: dict[str, dict[str, Any]], sizes: Sizes, label: str
) -> dict[str, Measured]:
    """The four hot paths on each of `views` (sessions by size), side by side: each round runs
    every path on every session, the sessions in turn (first to last, then last to first), so
    that a slower moment of a shared machine falls on each size alike. A measure that fails is
    recorded as failed for its session (a row that says so), and the others still run."""
    advance = ctx.task(label, (sizes.warmup + sizes.rounds) * len(HOT_PATHS) * len(views))
    measured = {size: Measured() for size in views}
    for n in range(sizes.warmup + sizes.rounds):
        for name in HOT_PATHS:
            order = list(views) if n % 2 == 0 else list(reversed(views))
            for size in order:
                advance(1)
                if name in measured[size].failed:
                    continue
                try:
                    elapsed, views[size] = await hot_path(ctx, views[size], name, n)
                except RuntimeError as exc:
                    measured[size].failed[name] = str(exc)[:160]
                    continue
                if n >= sizes.warmup:
                    measured[size].samples[name].append(elapsed)
    return measured


async def hot_path(
    ctx: Context, view: dict[str, Any], name: str, n: int
) -> tuple[float, dict[str, Any]]:
    """One hot path, the `n`-th time, on the session of `view`: its time and the session view
    after it."""
    sid = view["session"]["id"]
    if name == "GET memory":
        elapsed, _ = await ctx.api.call("GET", f"/v1/sessions/{sid}/memory")
    elif name == "GET instructions":
        elapsed, _ = await ctx.api.call("GET", f"/v1/sessions/{sid}/instructions")
    elif name == "Remember":
        command = {"_tag": "Remember", "key": f"grow-{uuid.uuid4().hex[:8]}",
                   "content": f"Measured fact {n}.", "kind": "fact"}
        elapsed, view = await ctx.api.timed_command(view, command)
    else:
        elapsed, answer = await ctx.api.call(
            "POST", f"/v1/sessions/{sid}/turns", {"items": four_items(n)}
        )
        view["session"].update(answer["session"])
    return elapsed, view


def growth_table(section: str, by_size: dict[str, Measured], limit: float) -> list[Row]:
    """Each hot path at each size against itself at the first size."""
    first_size, first = next(iter(by_size.items()))
    rows = []
    for name in HOT_PATHS:
        for size, measured in by_size.items():
            if name in measured.failed or not measured.samples[name]:
                rows.append(Row(section, name, size, goal=f"≤ {limit:g}x", met=False,
                                figure=f"failed: {measured.failed.get(name, 'no samples')}"))
                continue
            base = first.samples[name] if measured is not first else []
            rows.append(latency_row(section, name, size, measured.samples[name],
                                    f"at {first_size}" if base else "", base, limit))
    return rows


async def verify_loaded(ctx: Context, view: dict[str, Any], branch: Branch,
                        entries: int | None = None) -> None:
    """The service reads the loaded session as one it made: its head, (when given) its number
    of entries, and its count of items, which names the next turn's items (`i-NN`): one more
    turn through the API shows it. The branch follows that turn."""
    sid = branch.session
    _, got = await ctx.api.call("GET", f"/v1/sessions/{sid}")
    if got["session"]["head"] != branch.head:
        raise RuntimeError(f"{sid}: head {got['session']['head']}, loaded {branch.head}")
    if entries is not None and len(got["memory"]["entries"]) != entries:
        raise RuntimeError(f"{sid}: {len(got['memory']['entries'])} entries, loaded {entries}")
    _, answer = await ctx.api.call("POST", f"/v1/sessions/{sid}/turns",
                                   {"items": four_items(branch.items)})
    expected = [item_id(branch.items + k + 1) for k in range(4)]
    if answer["turn"]["items"] != expected:
        raise RuntimeError(f"{sid}: the next items are {answer['turn']['items']}, not {expected}")
    branch.items, branch.head = items_after(answer), answer["session"]["head"]
    view["session"].update(answer["session"])


async def resync(ctx: Context, view: dict[str, Any], branch: Branch) -> None:
    """After measures that added items, one more turn through the API tells the branch's
    count of items and head."""
    sid = branch.session
    _, answer = await ctx.api.call("POST", f"/v1/sessions/{sid}/turns",
                                   {"items": four_items(branch.items)})
    branch.items, branch.head = items_after(answer), answer["session"]["head"]
    view["session"].update(answer["session"])


def four_items(n: int) -> list[dict[str, str]]:
    return [{"type": "message", "role": "user" if k % 2 == 0 else "assistant",
             "content": f"Turn {n}, item {k}: the budget is {n * k} EUR."} for k in range(4)]


async def organic_branch(ctx: Context, view: dict[str, Any]) -> Branch:
    """The session's next turn (4 items) through the REST API; the loader's turns copy it."""
    sid = view["session"]["id"]
    _, answer = await ctx.api.call("POST", f"/v1/sessions/{sid}/turns", {"items": four_items(0)})
    branch = Branch(sid, ctx.person)
    await loader.follow(ctx.db, branch, answer["turn"]["id"], items_after(answer),
                        answer["session"]["head"])
    view["session"].update(answer["session"])
    return branch


def items_after(answer: dict[str, Any]) -> int:
    """How many items the branch has after a turn: its last item's position (`i-NN`)."""
    return int(str(answer["turn"]["items"][-1]).removeprefix("i-"))


async def background(ctx: Context, items: int) -> None:
    """`items` items in other sessions (of another agent), so that the graph is that big."""
    if items <= 0:
        return
    agent = await ctx.api.agent("bench background")
    advance = ctx.task("loading other sessions", items)
    left = items
    while left > 0:
        view = await ctx.api.quiet_session(agent)
        branch = await organic_branch(ctx, view)
        size = max(0, min(left, BACKGROUND_SESSION_ITEMS) - branch.items)
        await loader.add_turns(ctx.db, branch, size, BACKGROUND_TURN_ITEMS, advance)
        left -= branch.items
        ctx.loaded_items += branch.items


async def growth_rows(ctx: Context, sizes: Sizes) -> list[Row]:
    """A session grown to each of `sizes.items` in 4-item turns, among other sessions that
    bring the graph to `sizes.graph_items` items, all measured side by side once loaded."""
    await background(ctx, sizes.graph_items - sum(sizes.items))
    agent = await ctx.api.agent("bench growth")
    advance = ctx.task("growing the sessions", sum(sizes.items))
    views: dict[str, dict[str, Any]] = {}
    branches: list[tuple[dict[str, Any], Branch]] = []
    for size in sizes.items:
        view = await ctx.api.quiet_session(agent)
        for n in range(sizes.command_entries):
            view = await ctx.api.command(view, {"_tag": "Remember", "key": f"k{n}",
                                                "content": f"Fact {n}.", "kind": "fact"})
        branch = await organic_branch(ctx, view)
        await loader.add_turns(ctx.db, branch, max(0, size - branch.items), 4, advance)
        await verify_loaded(ctx, view, branch)
        views[f"{size:,} items"] = view
        branches.append((view, branch))
    by_size = await hot_paths(ctx, views, sizes, "measuring every size")
    for view, branch in branches:
        await resync(ctx, view, branch)
        ctx.loaded_items += branch.items
    return growth_table("session growth", by_size, 1.3)


async def entries_rows(ctx: Context, sizes: Sizes) -> list[Row]:
    """Sessions with `sizes.entries` entries (each citing an item of a 4-item turn), their
    agent holding `sizes.agent_entries` shared entries, measured side by side once loaded."""
    views: dict[str, dict[str, Any]] = {}
    for count in sizes.entries:
        agent = await ctx.api.agent(f"bench entries {count}")
        view = await ctx.api.quiet_session(agent)
        branch = await organic_branch(ctx, view)
        advance = ctx.task(f"loading {count:,} entries", count * 2 + sizes.agent_entries)
        await loader.add_turns(ctx.db, branch, count, 4, advance, keep_uids=True)
        await loader.add_entries(ctx.db, branch, count, 1, advance)
        await loader.add_agent_entries(ctx.db, ctx.org, agent, ctx.person,
                                       sizes.agent_entries, advance)
        _, got = await ctx.api.call("GET", f"/v1/sessions/{branch.session}")
        branch.head = got["session"]["head"]  # consolidation made the newest versions
        await verify_loaded(ctx, view, branch, entries=count)
        views[f"{count:,} entries"] = view
    by_size = await hot_paths(ctx, views, sizes, "measuring every size")
    return growth_table(f"entries (+{sizes.agent_entries:,} agent)", by_size, 1.3)


# --- nested view: our GraphQL against @neo4j/graphql -------------------------------------


OURS_NESTED = """query Nested($id: ID!) {
  session(id: $id) { id memory { entries(first: 200) { nodes { key content
    sources { id content turn { id at } } } } } } }"""
PEER_NESTED = """query Nested($id: ID!, $limit: Int!) {
  sessions(where: { id: { eq: $id } }) { id entries(limit: $limit) { key
    changes { content cites { id content turn { id at } } } } } }"""


def hammer(url: str, query: str, variables: dict[str, Any], token: str | None,
           requests: int, concurrency: int) -> dict[str, Any]:
    """Run bench.load in its own process against `url`."""
    body = json.dumps({"query": query, "variables": variables, "token": token})
    done = subprocess.run(
        [sys.executable, "-m", "bench.load", url, str(requests), str(concurrency)],
        input=body, capture_output=True, text=True, check=False, cwd=ROOT,
    )
    if done.returncode != 0:
        raise RuntimeError(f"bench.load failed: {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout)
    if result["errors"]:
        raise RuntimeError(f"{url} answered errors: {result['errors']}")
    return result


async def execution_alone(ctx: Context, sid: str, rounds: int = 30) -> list[float]:
    """The same document executed by the app's schema in this process, with every load
    answered from its loaders' cache (the first execution fills it): what Strawberry and
    graphql-core cost for this shape alone, with no database, no HTTP and no other client."""
    from app.api.graphql.context import Context as GraphContext
    from app.api.graphql.schema import schema
    from app.domain.principals import Principal
    from app.memory.service import Service

    service = Service.build(settings_for(ctx.target), ctx.db)
    context = GraphContext(service, Principal(ctx.org, ctx.person), cast(Any, None),
                           cast(Any, None))
    samples = []
    for n in range(rounds + 3):
        started = time.perf_counter()
        result = await schema.execute(OURS_NESTED, variable_values={"id": sid},
                                      context_value=context)
        if result.errors:
            raise RuntimeError(f"the nested view answered errors: {result.errors}")
        if n >= 3:
            samples.append((time.perf_counter() - started) * 1000)
    return samples


def nested_shape(entries: list[dict[str, Any]]) -> list[tuple[str, int, int]]:
    """(key, sources, sources with a turn) per entry: what both views must agree on."""
    return sorted(
        (e["key"], len(e["sources"]), sum(1 for s in e["sources"] if s["turn"]))
        for e in entries
    )


async def nested_rows(ctx: Context, sizes: Sizes) -> list[Row]:
    """The session view nested four deep, ours and the peer's, on the same session. Ours twice:
    as served (a session that did not move since a read answers the view that read kept, after
    one small statement that says so) and by a second server that keeps no view
    (`kept_view_entries=0`), so that every read reads the whole view, as one after a change
    does."""
    count = sizes.nested_entries
    agent = await ctx.api.agent("bench nested")
    view = await ctx.api.quiet_session(agent)
    branch = await organic_branch(ctx, view)
    advance = ctx.task(f"loading {count} nested entries", count * 3)
    await loader.add_turns(ctx.db, branch, count * 2, 4, advance, keep_uids=True)
    await loader.add_entries(ctx.db, branch, count, 2, advance)
    sid, section = branch.session, f"nested view ({count} entries)"
    ours = (await ctx.api.graphql(OURS_NESTED, id=sid))["session"]["memory"]["entries"]["nodes"]
    if len(ours) != count:
        raise RuntimeError(f"our nested view has {len(ours)} entries, not {count}")
    warm = sizes.nested_warmup
    alone = latency_row(section, "ours: GraphQL execution alone", "in process, c=1",
                        await execution_alone(ctx, sid))
    database = neo4j_pid()
    unkept = quiet(Served(settings_for(ctx.target, worker_poll_seconds=3600.0,
                                       kept_view_entries=0), ctx.target))
    sides = [our_side(served, sid, ctx.api.bearer, database) for served in (ctx.served, unkept)]
    peer, why = None, "--no-peer"
    try:
        for side in sides:
            hammer(side.url, OURS_NESTED, {"id": sid}, side.token, warm, sizes.concurrency)
        from bench.peer import Peer

        if ctx.peer:
            try:
                peer = Peer(ctx.target)
            except SetupError as exc:  # say exactly why, in the table, and keep our figures
                why = str(exc)
        if peer is not None:
            sides.append(await peer_side(peer, sid, count, ours, database, sizes))
        # All are measured in alternating rounds, so that a slower moment of a shared
        # machine falls on each side alike rather than on whichever ran last.
        share = max(1, sizes.nested_requests // NESTED_ROUNDS)
        for _ in range(NESTED_ROUNDS):
            for side in sides:
                side.round(share, sizes.concurrency)
    finally:
        unkept.stop()
        if peer is not None:
            peer.stop()
    mine, reread = sides[0], sides[1]
    rows = [
        *our_rows(section, sizes, mine, "ours"),
        *our_rows(section, sizes, reread, "ours, no view kept"),
        alone,
    ]
    if peer is None:
        return [*rows, Row(section, "ours: throughput", f"c={sizes.concurrency}",
                           figure=f"{mine.rate:.1f} req/s, {reread.rate:.1f} with no view "
                                  f"kept; @neo4j/graphql not run: {why}"[:300])]
    theirs = sides[2]
    ratio, reread_ratio = mine.rate / theirs.rate, reread.rate / theirs.rate
    rounds = f"c={sizes.concurrency}, {NESTED_ROUNDS} rounds each"
    return [
        *rows,
        latency_row(section, "@neo4j/graphql: latency under load", f"c={sizes.concurrency}",
                    theirs.latencies),
        Row(section, "@neo4j/graphql: statements per request", "",
            figure=f"{theirs.statements:.1f}"),
        Row(section, "CPU per request: server, Neo4j", "ms",
            figure=f"ours {mine.cpu()}; no view kept {reread.cpu()}; "
                   f"@neo4j/graphql {theirs.cpu()}"),
        Row(section, "throughput, ours vs @neo4j/graphql", rounds, against="@neo4j/graphql",
            ratio=ratio, goal="≥ 2x", met=ratio >= 2.0,
            figure=f"{mine.rate:.1f} vs {theirs.rate:.1f} req/s "
                   f"(rounds {mine.rates()} vs {theirs.rates()})"),
        Row(section, "throughput, ours with no view kept vs @neo4j/graphql", rounds,
            against="@neo4j/graphql", ratio=reread_ratio, goal="≥ 1.0x", met=reread_ratio >= 1.0,
            figure=f"{reread.rate:.1f} vs {theirs.rate:.1f} req/s (rounds {reread.rates()}): "
                   "a read after a change"),
    ]


def our_side(served: Served, sid: str, bearer: str, database: int | None) -> Side:
    def statements() -> int:  # what the served app has run so far (its Database counts each)
        return int(served.metric("openbot_memory_request_statements"))

    return Side(f"{served.url}/graphql", OURS_NESTED, {"id": sid}, bearer, statements,
                served.process.pid, database)


async def peer_side(
    peer: Any, sid: str, count: int, ours: list[dict[str, Any]], database: int | None,
    sizes: Sizes,
) -> Side:
    """The peer's side, once its answer is shown to have the shape of ours, warmed up."""
    variables = {"id": sid, "limit": count}
    async with httpx.AsyncClient(timeout=120) as http:
        answer = await http.post(peer.url, json={"query": PEER_NESTED, "variables": variables})
    first = answer.json()
    if first.get("errors"):
        raise RuntimeError(f"@neo4j/graphql: {first['errors']}")
    theirs = [
        {"key": e["key"], "sources": [s for c in e["changes"] for s in c["cites"]]}
        for e in first["data"]["sessions"][0]["entries"]
    ]
    for entry in theirs:
        for source in entry["sources"]:
            source["turn"] = source["turn"][0] if source["turn"] else None
    if nested_shape(theirs) != nested_shape(ours):
        raise RuntimeError("the peer's nested view differs from ours")
    hammer(peer.url, PEER_NESTED, variables, None, sizes.nested_warmup, sizes.concurrency)
    return Side(peer.url, PEER_NESTED, variables, None, peer.statements, peer.process.pid,
                database)


NESTED_ROUNDS = 4


def our_rows(section: str, sizes: Sizes, side: Side, name: str) -> list[Row]:
    return [
        latency_row(section, f"{name}: latency under load", f"c={sizes.concurrency}",
                    side.latencies),
        Row(section, f"{name}: statements per request", "", goal="≤ 2",
            met=side.statements <= 2, figure=f"{side.statements:.1f} (auth included)"),
    ]


@dataclass
class Side:
    """One GraphQL server of the nested view, measured a round at a time."""

    url: str
    query: str
    variables: dict[str, Any]
    token: str | None
    counter: Callable[[], int]
    server: int  # the pids whose CPU time each request costs: the GraphQL server's, Neo4j's
    database: int | None
    seconds: list[float] = field(default_factory=list)
    requests: list[int] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    counted: int = 0
    server_cpu: float = 0.0
    database_cpu: float = 0.0

    def round(self, requests: int, concurrency: int) -> None:
        before = self.counter()
        server, database = cpu_seconds(self.server), cpu_seconds(self.database)
        result = hammer(self.url, self.query, self.variables, self.token, requests,
                        concurrency)
        self.server_cpu += cpu_seconds(self.server) - server
        self.database_cpu += cpu_seconds(self.database) - database
        self.counted += self.counter() - before
        self.seconds.append(result["seconds"])
        self.requests.append(requests)
        self.latencies += result["latencies_ms"]

    @property
    def rate(self) -> float:
        return sum(self.requests) / sum(self.seconds)

    @property
    def statements(self) -> float:
        return self.counted / sum(self.requests)

    def rates(self) -> str:
        return " ".join(f"{n / s:.1f}" for n, s in zip(self.requests, self.seconds, strict=True))

    def cpu(self) -> str:
        """Milliseconds of CPU per request, of the server and of Neo4j."""
        each = 1000 / sum(self.requests)
        database = f"{self.database_cpu * each:.1f}" if self.database else "?"
        return f"{self.server_cpu * each:.1f}, {database}"


def cpu_seconds(pid: int | None) -> float:
    """User and system CPU time of a process so far (Linux's /proc; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def neo4j_pid() -> int | None:
    """The bench's local Neo4j, when it runs one (not with NEO4J_URI)."""
    if Settings().neo4j_uri:
        return None
    server = local_server.status(Settings(state_dir=ROOT / ".openbot-memory-bench"))
    return server.pid if server else None


# --- consolidation -----------------------------------------------------------------------


RETRIES = "openbot_memory_neo4j_transaction_retries_total"


def model_seconds(served: Served, model: str) -> float:
    """The time the service has spent in `model`'s calls so far (its own histogram)."""
    return served.metric("openbot_memory_model_call_duration_seconds_sum", {"model": model})


async def consolidation_rows(target: Target, bearer: str, sizes: Sizes, bar: Progress
                             ) -> list[Row]:
    """A served app with its workers on (the built-in model): turn to applied, and turns per
    minute consolidated while turns keep coming."""
    served = quiet(Served(settings_for(target, workers=2), target))
    api = Api(served.url, bearer)
    try:
        agent = await api.agent("bench consolidation")
        latency = await applied_latency(api, served, agent, sizes, bar)
        retried = served.metric(RETRIES, {"access": "write"})
        rate, turns = await sustained(api, served, agent, sizes, bar)
    finally:
        await api.close()
        served.stop()
    samples, model_ms = latency
    p50 = percentile(samples, 0.5)
    return [
        Row("consolidation", "turn -> applied, minus model time", "builtin, 1 session", p50,
            percentile(samples, 0.95), goal="p50 ≤ 100 ms", met=p50 <= 100,
            figure=f"model {model_ms:.1f} ms/run; {retried:.0f} write retries"),
        Row("consolidation", "turns consolidated per minute",
            f"{sizes.sustain_seconds:.0f} s, {sizes.sustain_sessions} sessions",
            goal="≥ 1000/min",
            met=rate >= 1000, figure=f"{rate:.0f}/min ({turns} turns)"),
    ]


def lesson(n: int) -> list[dict[str, str]]:
    return [
        {"type": "message", "role": "user", "content": f"I prefer hotel {n} near the station."},
        {"type": "message", "role": "assistant", "content": "Noted."},
    ]


async def applied_latency(
    api: Api, served: Served, agent: str, sizes: Sizes, bar: Progress
) -> tuple[list[float], float]:
    """One turn at a time: from its POST to its run's `finishedAt`, less that run's model
    time (the service's own model-call histogram); and the mean model time."""
    view = (await api.call("POST", "/v1/sessions", {"agent": agent, "model": "builtin"}))[1]
    sid = view["session"]["id"]
    rounds, warmup = sizes.latency_rounds, sizes.latency_warmup
    task = bar.add_task("consolidation latency", total=rounds + warmup)
    samples: list[float] = []
    model_total = 0.0
    for n in range(warmup + rounds):
        before = model_seconds(served, "builtin")
        sent = time.time() * 1000
        _, answer = await api.call("POST", f"/v1/sessions/{sid}/turns", {"items": lesson(n)},
                                   params={"wait": 30})
        run = answer.get("run")
        if run is None or run["status"] != "succeeded":
            raise RuntimeError(f"the turn's run did not succeed: {run}")
        _, found = await api.call("GET", f"/v1/sessions/{sid}/runs/{run['id']}")
        spent = (model_seconds(served, "builtin") - before) * 1000
        if n >= warmup:
            samples.append(found["finishedAt"] - sent - spent)
            model_total += spent
        bar.advance(task, 1)
    return samples, model_total / max(rounds, 1)


async def sustained(
    api: Api, served: Served, agent: str, sizes: Sizes, bar: Progress
) -> tuple[float, int]:
    """Turns posted by 4 clients round-robin over `sizes.sustain_sessions` sessions for
    `sizes.sustain_seconds`; turns consolidated per minute, from the first POST to the last
    run's end."""
    seconds = sizes.sustain_seconds
    sessions = []
    for _ in range(sizes.sustain_sessions):
        view = (await api.call("POST", "/v1/sessions", {"agent": agent, "model": "builtin"}))[1]
        sessions.append(view["session"]["id"])
    task = bar.add_task("sustained consolidation", total=round(seconds))
    started_ms = time.time() * 1000
    deadline = time.monotonic() + seconds
    posted = 0

    async def client(k: int) -> None:
        nonlocal posted
        n = k
        while time.monotonic() < deadline:
            sid = sessions[n % len(sessions)]
            await api.call("POST", f"/v1/sessions/{sid}/turns", {"items": lesson(n)})
            posted += 1
            n += 4

    async def tick() -> None:
        while time.monotonic() < deadline:
            await asyncio.sleep(1)
            bar.advance(task, 1)

    await asyncio.gather(tick(), *(client(k) for k in range(4)))
    finished = await idle(api, served, sessions, 600)
    minutes = max(finished - started_ms, 1.0) / 60_000
    return posted / minutes, posted


PENDING = "openbot_memory_jobs"


async def idle(api: Api, served: Served, sessions: Sequence[str], seconds: float) -> float:
    """Wait until no run is queued or running; the last run's `finishedAt` of `sessions`.
    While runs drain, it asks the service's one pending-jobs gauge (a count), not every
    session's runs, so that waiting adds no load to what it measures."""
    deadline = time.monotonic() + seconds

    def pending() -> float:
        return sum(served.metric(PENDING, {"kind": "consolidation", "status": status})
                   for status in ("queued", "running"))

    while (left := await asyncio.to_thread(pending)) > 0:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{left:.0f} runs still pending after {seconds:.0f} s")
        await asyncio.sleep(0.25)
    runs = [run for sid in sessions
            for run in (await api.call("GET", f"/v1/sessions/{sid}/runs"))[1]["runs"]]
    failed = [run for run in runs if run["status"] != "succeeded"]
    if failed:
        raise RuntimeError(f"{len(failed)} runs did not succeed: {failed[0]}")
    return float(max((run["finishedAt"] for run in runs), default=0))


# --- the run -----------------------------------------------------------------------------


def hardware() -> str:
    """Cores, CPU and memory of this machine."""
    memory = "?"
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/meminfo") as info:
            kib = int(next(line for line in info if line.startswith("MemTotal")).split()[1])
        memory = f"{kib / 1024 / 1024:.1f} GiB"
        with open("/proc/cpuinfo") as info:
            cpu = next((line.split(":", 1)[1].strip() for line in info
                        if line.startswith("model name")), cpu)
    except (OSError, StopIteration, ValueError):
        pass
    return f"{os.cpu_count()} cores ({cpu}), {memory} RAM"


async def machine(db: Database) -> str:
    """The line printed above the table: the hardware and the Neo4j version."""
    rows = await db.read(lambda tx: tx.rows("bench_neo4j_version"))
    neo4j = ", ".join(f"{r['name']} {r['version']} {r['edition']}" for r in rows)
    return f"{hardware()}, {neo4j}, Python {platform.python_version()}"


async def measure_all(
    ctx: Context, sizes: Sizes, consolidation_token: str, sections: Sequence[str]
) -> list[Row]:
    rows: list[Row] = []
    if "commands" in sections:
        rows += await command_rows(ctx, sizes)
    if "growth" in sections:
        rows += await growth_rows(ctx, sizes)
    if "entries" in sections:
        rows += await entries_rows(ctx, sizes)
    if "view" in sections:
        rows += await view_rows(ctx, sizes)
    if "provenance" in sections:
        rows += await provenance_rows(ctx, sizes)
    if "nested" in sections:
        rows += await nested_rows(ctx, sizes)
    if "consolidation" in sections:
        rows += await consolidation_rows(ctx.target, consolidation_token, sizes, ctx.bar)
    return rows


SECTIONS = ("commands", "growth", "entries", "view", "provenance", "nested", "consolidation")


async def run(
    target: Target, sizes: Sizes, peer: bool = True, sections: Sequence[str] = SECTIONS,
    console: Console | None = None,
) -> tuple[str, list[Row]]:
    """Every measure against `target`: the machine line and the rows."""
    org = f"bench{uuid.uuid4().hex[:8]}"
    bearer = await _token(target, org, "ana")
    settings = settings_for(target, worker_poll_seconds=3600.0)  # idle workers stay idle
    served = quiet(Served(settings, target))
    db = await Database.connect(target)
    api = Api(served.url, bearer)
    try:
        with loader.progress(console) as bar:
            ctx = Context(target, served, api, db, org, "ana", bar, peer)
            line = await machine(db)
            rows = await measure_all(ctx, sizes, bearer, sections)
    finally:
        await api.close()
        await db.close()
        served.stop()
    return line, rows


async def _token(target: Target, org: str, person: str) -> str:
    from app.cli import _create_token

    return await _create_token(settings_for(target), org, person)


def sizes_from(args: argparse.Namespace) -> Sizes:
    sizes = QUICK if args.quick else Sizes()

    def counts(text: str | None) -> tuple[int, ...] | None:
        return None if text is None else tuple(int(x.replace("_", "")) for x in text.split(","))

    changed: dict[str, Any] = {}
    if (items := counts(args.items)) is not None:
        changed["items"] = items
    if (entries := counts(args.entries)) is not None:
        changed["entries"] = entries
    for name in ("graph_items", "agent_entries", "rounds", "nested_entries",
                 "nested_requests", "concurrency", "sustain_seconds", "view_entries"):
        if getattr(args, name) is not None:
            changed[name] = getattr(args, name)
    sizes = replace(sizes, **changed)
    if sizes.graph_items < max(sizes.items):
        raise SystemExit("--graph-items must be at least the largest of --items")
    return sizes


def parser() -> argparse.ArgumentParser:
    parse = argparse.ArgumentParser(
        prog="bench/run", description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parse.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    parse.add_argument("--items", help="sizes of the grown session, e.g. 1000,10000,100000")
    parse.add_argument("--graph-items", type=int, help="items in the whole graph (1000000)")
    parse.add_argument("--entries", help="entries per session, e.g. 100,1000,100000")
    parse.add_argument("--agent-entries", type=int, help="agent entries beside them (1000)")
    parse.add_argument("--rounds", type=int, help="samples per measure (50)")
    parse.add_argument("--nested-entries", type=int, help="entries of the nested view (200)")
    parse.add_argument("--nested-requests", type=int, help="requests per nested run (400)")
    parse.add_argument("--concurrency", type=int, help="clients of the nested runs (8)")
    parse.add_argument("--sustain-seconds", type=float, help="sustained consolidation (60)")
    parse.add_argument("--view-entries", type=int,
                       help="entries of the large view (10000)")
    parse.add_argument("--only", help=f"some sections: {','.join(SECTIONS)}")
    parse.add_argument("--no-peer", action="store_true", help="skip @neo4j/graphql")
    parse.add_argument("--json", help="also write the rows to this file")
    parse.add_argument("--keep-graph", action="store_true",
                       help="reuse the bench Neo4j's graph instead of starting empty")
    return parse


def main() -> None:
    args = parser().parse_args()
    sizes = sizes_from(args)
    sections = tuple(args.only.split(",")) if args.only else SECTIONS
    unknown = set(sections) - set(SECTIONS)
    if unknown:
        raise SystemExit(f"unknown sections: {', '.join(sorted(unknown))}")
    peer = not args.no_peer and "nested" in sections
    # A log or a pipe gets the whole table, not one squeezed into 80 columns.
    console = Console() if sys.stdout.isatty() else Console(width=200)
    started = time.monotonic()
    with neo4j_target(apoc=peer, fresh=not args.keep_graph) as target:
        line, rows = asyncio.run(run(target, sizes, peer, sections))
    mode = "quick" if args.quick else "full"
    console.print(f"Machine: {line}")
    console.print(f"Sizes ({mode}): {sizes}")
    console.print(render(rows, f"bench/run ({mode}, {time.monotonic() - started:.0f} s)"))
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"machine": line, "sizes": asdict(sizes), "rows": [asdict(row) for row in rows]},
            indent=2,
        ))


if __name__ == "__main__":
    main()
