"""Agents: the configured assistants of an org, visible to all its members."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.domain.agents import Agent
from app.domain.principals import Principal
from app.errors import NotFound
from app.memory.changes.commands import check_agent_name, check_model_name
from app.memory.ids import new_id, now_ms
from app.store.agents import AgentRepository
from app.store.database import Database, Tx


async def create_agent(
    tx: Tx, who: Principal, name: str, shared: bool, model: str | None
) -> Agent:
    """A new agent of the caller's org, in the caller's transaction; `model` is one the
    caller checked (a request's), or one the service stored (a promoted session's)."""
    name = check_agent_name(name)
    agent = await AgentRepository(tx).create(
        who.org, new_id("agt"), name, shared, model, now_ms()
    )
    if agent is None:
        raise NotFound(f"no org {who.org}")
    return agent


@dataclass
class Agents:
    """Creating and finding the agents of the caller's org."""

    db: Database

    async def create(self, who: Principal, name: str, shared: bool, model: str | None) -> Agent:
        check_model_name(model, "model")
        return await self.db.write(lambda tx: create_agent(tx, who, name, shared, model))

    async def find(self, who: Principal, ids: Sequence[str]) -> dict[str, Agent]:
        return await self.db.read(lambda tx: AgentRepository(tx).find(who.org, ids))

    async def get(self, who: Principal, agent_id: str) -> Agent:
        found = await self.find(who, [agent_id])
        if agent_id not in found:
            raise NotFound(f"no agent {agent_id}")
        return found[agent_id]

    async def page(self, who: Principal, offset: int, limit: int) -> list[Agent]:
        return await self.db.read(lambda tx: AgentRepository(tx).page(who.org, offset, limit))
