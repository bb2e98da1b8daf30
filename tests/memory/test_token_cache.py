"""A revocation made by this process is honoured at once: a token lookup that read the graph
before the revocation keeps nothing in the cache, so the next request reads the token again."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any, cast

from app.domain.tokens import Grant
from app.errors import Unauthorized
from app.memory.access.tokens import Tokens, token_id
from app.memory.ids import now_ms
from app.store.database import Database

TOKEN = "obm_a-token-of-ana"


class Graph:
    """A stand-in for the database: reads answer the token's grant as the graph holds it when
    the read runs, and a held read waits for the test to release it before answering."""

    def __init__(self) -> None:
        self.grant = Grant("acme", "ana", None, revoked=False, expires_at=None,
                           last_used_at=now_ms())
        self.hold: asyncio.Event | None = None
        self.read_began = asyncio.Event()
        self.reads = 0

    async def read(self, work: Callable[[Any], Awaitable[Any]]) -> Grant:
        self.reads += 1
        grant = self.grant  # what the graph holds when the read runs
        self.read_began.set()
        if self.hold is not None:
            await self.hold.wait()
        return grant

    async def write(self, work: Callable[[Any], Awaitable[Any]]) -> str:
        self.grant = replace(self.grant, revoked=True)  # the only write here: the revocation
        return token_id("hash")


async def a_lookup_in_flight_during_a_revocation() -> tuple[int, str]:
    graph = Graph()
    tokens = Tokens(cast(Database, graph), None, cache_seconds=60)
    graph.hold = asyncio.Event()
    lookup = asyncio.create_task(tokens.principal(f"Bearer {TOKEN}"))
    await graph.read_began.wait()  # the lookup has read the token, not yet revoked
    await tokens.revoke(TOKEN)
    graph.hold.set()
    assert (await lookup).person == "ana"  # it was read before the revocation
    graph.hold = None
    try:
        await tokens.principal(f"Bearer {TOKEN}")
    except Unauthorized as exc:
        return graph.reads, exc.message
    return graph.reads, "let through"


def test_a_lookup_read_before_a_revocation_is_not_kept() -> None:
    # the next request reads the token again and is refused, though the cache lasts a minute
    assert asyncio.run(a_lookup_in_flight_during_a_revocation()) == (2, "this token was revoked")


async def two_requests() -> int:
    graph = Graph()
    tokens = Tokens(cast(Database, graph), None, cache_seconds=60)
    for _ in range(2):
        assert (await tokens.principal(f"Bearer {TOKEN}")).person == "ana"
    return graph.reads


def test_a_lookup_with_no_revocation_meanwhile_is_kept() -> None:
    assert asyncio.run(two_requests()) == 1
