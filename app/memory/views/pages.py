"""Keyset pages of the lists that grow with history (see app/store/pages.py), each read in a
transaction of its own."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.domain.agents import Agent, AgentChange
from app.domain.history import Change, Version
from app.domain.items import Item
from app.domain.principals import Principal
from app.memory.agents.entries import change_as_seen
from app.store.database import Database
from app.store.pages import Key, PageRepository


@dataclass
class Pages:
    """The keyset reads behind GraphQL's connections."""

    db: Database

    async def items(
        self, who: Principal, versions: Sequence[str], after: int | None, first: int
    ) -> dict[str, list[Item]]:
        return await self.db.read(lambda tx: PageRepository(tx).items(who, versions, after, first))

    async def versions(
        self, who: Principal, sessions: Sequence[str], after: Key, first: int
    ) -> dict[str, list[Version]]:
        return await self.db.read(
            lambda tx: PageRepository(tx).versions(who, sessions, after, first)
        )

    async def run_ids(
        self, who: Principal, sessions: Sequence[str], after: Key, first: int
    ) -> dict[str, list[str]]:
        return await self.db.read(
            lambda tx: PageRepository(tx).run_ids(who, sessions, after, first)
        )

    async def turn_ids(
        self, who: Principal, sessions: Sequence[str], after: Key, first: int
    ) -> dict[str, list[str]]:
        return await self.db.read(
            lambda tx: PageRepository(tx).turn_ids(who, sessions, after, first)
        )

    async def changes(
        self, who: Principal, change_ids: Sequence[str], after: str | None, first: int
    ) -> dict[str, list[Change] | None]:
        return await self.db.read(
            lambda tx: PageRepository(tx).changes(who, change_ids, after, first)
        )

    async def agent_changes(
        self, who: Principal, change_ids: Sequence[str], after: str | None, first: int
    ) -> dict[str, list[AgentChange] | None]:
        found = await self.db.read(
            lambda tx: PageRepository(tx).agent_changes(who, change_ids, after, first)
        )
        return {
            cid: None if chain is None else [change_as_seen(who.person, c) for c in chain]
            for cid, chain in found.items()
        }

    async def agent_session_ids(
        self, who: Principal, agents: Sequence[str], after: Key, first: int
    ) -> dict[str, list[str]]:
        return await self.db.read(
            lambda tx: PageRepository(tx).agent_session_ids(who, agents, after, first)
        )

    async def job_ids(
        self, who: Principal, agents: Sequence[str], after: Key, first: int
    ) -> dict[str, list[str]]:
        return await self.db.read(lambda tx: PageRepository(tx).job_ids(who, agents, after, first))

    async def session_ids(
        self, who: Principal, agent: str | None, after: Key, first: int
    ) -> list[str]:
        return await self.db.read(
            lambda tx: PageRepository(tx).session_ids(who, agent, after, first)
        )

    async def agents(self, who: Principal, after: Key, first: int) -> list[Agent]:
        return await self.db.read(lambda tx: PageRepository(tx).agents(who, after, first))
