"""bench/run cannot rot: its measures run at tiny sizes and fill the table's every row, and its
loader writes sessions the service could have written itself. No figure is asserted (speed is
for bench/run, not for tests)."""

from __future__ import annotations

import asyncio
from typing import Any

from app.store.database import Database, Target, Tx
from bench import harness, loader
from bench import search as bench_search
from bench.common import Served, settings_for
from bench.harness import COLUMNS, HOT_PATHS, Api, Context, Sizes, render
from tests.conftest import Api as Client
from tests.conftest import Graph

TINY = Sizes(
    items=(12, 24), graph_items=40, entries=(3, 5), agent_entries=3, rounds=1,
    nested_entries=3, nested_requests=4, concurrency=2, latency_rounds=1, sustain_seconds=1.0,
    sustain_sessions=2, command_entries=2, warmup=0, view_entries=6, provenance_entries=4,
)


def test_every_measure_fills_its_rows(graph: Graph, neo4j_target: Target) -> None:
    line, rows = asyncio.run(harness.run(neo4j_target, TINY, peer=False))
    assert "cores" in line
    assert "Neo4j Kernel 5.26" in line or "neo4j" in line.lower()
    table = render(rows, "smoke")
    assert [column.header for column in table.columns] == list(COLUMNS)
    assert table.row_count == len(rows)

    commands = [r for r in rows if r.section == "command vs raw"]
    assert [r.measure for r in commands] == [
        "Remember", "Forget", "Configure", "POST turn, 1 item", "GET session", "GET memory",
        "GET instructions",
    ]
    assert all(r.p50 and r.p95 and r.base_p50 and r.ratio for r in commands)
    # every command and read also against the minimal write, and the floor statement itself
    minimal = [r for r in rows if r.section == "command vs minimal"]
    assert [r.measure for r in minimal] == [
        *(r.measure for r in commands), "raw floor: bench_memory_edit",
    ]
    assert all(r.ratio and r.against == "minimal write" for r in minimal)
    view = [r for r in rows if r.section == "view"]
    assert [(r.measure, r.size) for r in view] == [("GET memory", "6 entries")]
    assert view[0].ratio
    assert view[0].against == "raw read, same rows"
    provenance = [r for r in rows if r.section == "provenance"]
    assert [r.measure for r in provenance] == ["entry story", "item supports", "turn shown"]
    assert all(r.p95 and r.goal == "p95 ≤ 20 ms" for r in provenance)
    growth = [(r.measure, r.size) for r in rows if r.section == "session growth"]
    assert growth == [(name, size) for name in HOT_PATHS for size in ("12 items", "24 items")]
    assert all(r.ratio for r in rows if r.section == "session growth" and r.size == "24 items")
    entries = [(r.measure, r.size) for r in rows if r.section.startswith("entries")]
    assert entries == [(name, size) for name in HOT_PATHS for size in ("3 entries", "5 entries")]
    nested = [r for r in rows if r.section.startswith("nested view")]
    assert [r.measure for r in nested] == [
        "ours: latency under load", "ours: statements per request",
        "ours, no view kept: latency under load", "ours, no view kept: statements per request",
        "ours: GraphQL execution alone", "ours: throughput",
    ]
    assert all(nested[n].p50 and nested[n].p95 for n in (0, 2, 4))
    # ≤ 2 statements per nested view, whether a view was kept or not
    assert [nested[n].met for n in (1, 3)] == [True, True]
    consolidation = [r for r in rows if r.section == "consolidation"]
    assert [r.measure for r in consolidation] == [
        "turn -> applied, minus model time", "turns consolidated per minute",
    ]
    assert consolidation[1].figure.endswith("turns)")


Shape = set[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]]


def shape(rows: list[dict[str, Any]]) -> Shape:
    """Each node's labels, property names and outgoing edges, as a set over the session."""
    return {(tuple(sorted(r["labels"])), tuple(sorted(r["keys"])), tuple(sorted(set(r["out"]))))
            for r in rows}


async def session_shape(db: Database, session: str) -> Shape:
    async def read(tx: Tx) -> Shape:
        return shape(await tx.rows("bench_session_shape", id=session))

    return await db.read(read)


def test_loaded_turns_make_the_graph_the_service_makes(graph: Graph, neo4j_target: Target) -> None:
    """A session grown by the loader has the same nodes, properties and edges as one grown
    through POST turns, and the service reads it the same way."""
    from app.cli import _create_token

    async def run() -> None:
        bearer = await _create_token(settings_for(neo4j_target), "acme", "ana")
        served = Served(settings_for(neo4j_target, worker_poll_seconds=3600.0), neo4j_target)
        db = await Database.connect(neo4j_target)
        api = Api(served.url, bearer)
        try:
            with loader.progress() as bar:
                ctx = Context(neo4j_target, served, api, db, "acme", "ana", bar, peer=False)
                agent = await api.agent("shape")
                views = [await api.quiet_session(agent) for _ in range(2)]
                for n, view in enumerate(views):
                    views[n] = await api.command(view, {"_tag": "Remember", "key": "k",
                                                        "content": "A fact.", "kind": "fact"})
                organic, loaded = views
                for n in range(4):  # 17 items, as the loaded one will have
                    await api.call("POST", f"/v1/sessions/{organic['session']['id']}/turns",
                                   {"items": harness.four_items(n)})
                branch = await harness.organic_branch(ctx, loaded)
                await loader.add_turns(db, branch, 8, 4, lambda n: None)
                await harness.verify_loaded(ctx, loaded, branch)  # a 4-item turn more
                shapes = [await session_shape(db, v["session"]["id"]) for v in (organic, loaded)]
                assert shapes[0] == shapes[1]
                memories = [(await api.call("GET", f"/v1/sessions/{v['session']['id']}"))[1]
                            for v in (organic, loaded)]
                assert [list(m["memory"]["entries"]) for m in memories] == [["k"], ["k"]]
                last = [(await api.graphql(
                    "query($id: ID!) { session(id: $id) { items(first: 200) "
                    "{ nodes { id seq type turn { shownKeys } } } } }", id=v["session"]["id"],
                ))["session"]["items"]["nodes"][16:] for v in (organic, loaded)]
                assert last[0] == last[1] == [
                    {"id": "i-17", "seq": 17, "type": "message", "turn": {"shownKeys": ["k"]}}
                ]
        finally:
            await api.close()
            await db.close()
            served.stop()

    asyncio.run(run())


def test_the_search_benchs_entries_are_what_the_service_reads_and_finds(
    api: Client, tokens: Any, neo4j_target: Target
) -> None:
    # bench.search loads its entries straight into the graph: each session's entries are read
    # by the session's view, and found by a search, as ones the service wrote would be
    tokens("acme", "ben")
    agent = api.agent()["id"]
    asyncio.run(bench_search.load(neo4j_target, "acme", agent, 200))  # 2 sessions, 20 agent
    memory = api.ok(api.get("/v1/sessions/ses-bench-acme-0/memory"))
    assert len(memory["entries"]) == bench_search.SESSION_ENTRIES
    replaced, kept = memory["entries"]["k5"], memory["entries"]["k7"]
    assert replaced["updatedAt"] == kept["updatedAt"] + 1  # the newer change is the current one
    found = api.ok(api.get("/v1/search", params={"q": "k5"}))["hits"]
    assert next((h["entry"].get("session"), h["entry"]["content"]) for h in found) == (
        "ses-bench-acme-0", replaced["content"])
    assert api.ok(api.get("/v1/search", params={"q": replaced["content"]}))["hits"]
