"""A database the driver has no connection for, because every connection of its pool stays
busy, answers as a database that is down: `Unavailable` (503 with a Retry-After), and a
readiness probe says not ready."""

from __future__ import annotations

import asyncio

import pytest
from neo4j import AsyncGraphDatabase

from app.errors import Unavailable
from app.store.database import Database, Target
from app.store.orgs import OrgRepository
from tests.conftest import Graph


def test_a_pool_with_no_free_connection_is_unavailable(
    neo4j_target: Target, graph: Graph
) -> None:
    async def run() -> tuple[bool, bool]:
        driver = AsyncGraphDatabase.driver(
            neo4j_target.uri, auth=(neo4j_target.user, neo4j_target.password),
            max_connection_pool_size=1, connection_acquisition_timeout=0.5,
        )
        db = Database(driver, neo4j_target.database)
        try:
            async with driver.session(database=neo4j_target.database) as held:
                busy = await held.begin_transaction()  # the pool's one connection, held
                await (await busy.run("RETURN 1")).consume()
                with pytest.raises(Unavailable) as refused:
                    await db.read(lambda tx: OrgRepository(tx).exists("acme"))
                assert refused.value.retry_after > 0
                ready_while_busy = await db.ping()
                await busy.rollback()
            return ready_while_busy, await db.ping()
        finally:
            await db.close()

    ready_while_busy, ready_after = asyncio.run(run())
    assert ready_while_busy is False
    assert ready_after is True
