"""What Neo4j plans for the service's statements: the catalog planned before the first request,
and, while the graph is small, statements that keep the plan Neo4j has for them."""

from __future__ import annotations

import asyncio
import re
from typing import LiteralString

import neo4j
from neo4j.exceptions import DriverError, Neo4jError

from app.store.catalog import CYPHER_DIR, statement

# While the graph is small, a few writes move Neo4j's statistics (counts per label, index
# selectivity) by more than its divergence threshold, so Neo4j plans a statement again each
# time it runs more than `dbms.cypher.min_replan_interval` (10 s) after its plan: on a young
# graph, every statement anew every few seconds, each plan seconds of a loaded machine, for
# plans that cost little whatever they are on a graph that small. So while the graph holds
# fewer than SMALL_GRAPH nodes, a statement keeps the plan Neo4j has for it
# (`CYPHER replan=skip`); from then on Neo4j replans as its statistics say. The size is read
# (from the count store) at connect and again at most every SIZE_SECONDS.
SMALL_GRAPH = 10_000
SIZE_SECONDS = 30.0
KEEP_PLAN: LiteralString = "CYPHER replan=skip\n"
PARAMETER = re.compile(r"\$(\w+)")
# Statements the warm-up does not plan: the schema's, and those run only by tests and tools
# (and `bench_*`, the benchmark's own).
NOT_PLANNED = frozenset({"schema", "fulltext_indexes", "drop_index", "await_index", "clear_graph"})


class Plans:
    """The plans of one database: whether the graph is small (SMALL_GRAPH), when that was last
    read and the read under way, if one is."""

    def __init__(self, driver: neo4j.AsyncDriver, database: str) -> None:
        self._driver = driver
        self._database = database
        self.small = False
        self._sized = -SIZE_SECONDS
        self._sizing: asyncio.Task[None] | None = None

    async def read_size(self) -> None:
        """Read whether the graph is small (SMALL_GRAPH); a failed read changes nothing."""
        self._sized = asyncio.get_running_loop().time()
        try:
            found, _, _ = await self._driver.execute_query(
                statement("graph_size"), database_=self._database,
                routing_=neo4j.RoutingControl.READ,
            )
        except (Neo4jError, DriverError, OSError):
            return
        self.small = found[0]["nodes"] < SMALL_GRAPH

    def text(self, name: str) -> LiteralString:
        """The text sent for statement `name`: as it is, or, on a small graph, keeping the plan
        Neo4j has (KEEP_PLAN). Reads the graph's size again, in the background, once
        SIZE_SECONDS have passed since the last read."""
        now = asyncio.get_running_loop().time()
        if now - self._sized >= SIZE_SECONDS and (self._sizing is None or self._sizing.done()):
            self._sized = now
            self._sizing = asyncio.create_task(self.read_size())
        text: LiteralString = statement(name)
        return KEEP_PLAN + text if self.small else text

    async def plan_catalog(self) -> int:
        """Have Neo4j parse and plan every statement of the catalog (EXPLAIN: nothing runs),
        so that a cold database's planner is warm before the first request: how many."""
        names = sorted(
            path.stem for path in CYPHER_DIR.glob("*.cypher")
            if path.stem not in NOT_PLANNED and not path.stem.startswith("bench_")
        )
        async with self._driver.session(database=self._database) as session:
            for name in names:
                text = statement(name)
                # every parameter given (null): Neo4j caches a plan only when none is missing,
                # so that a second warm-up against the same Neo4j costs little
                params = dict.fromkeys(PARAMETER.findall(text))
                result = await session.run(f"EXPLAIN {text}", params)
                await result.consume()
        return len(names)

    async def close(self) -> None:
        """Wait for the size read under way, if one is."""
        if self._sizing is not None:
            await asyncio.gather(self._sizing, return_exceptions=True)
