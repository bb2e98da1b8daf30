"""The agent repository: creating agents and finding them in their org."""

from __future__ import annotations

from collections.abc import Sequence

from app.domain.agents import Agent
from app.store.database import Tx
from app.store.records import record


class AgentRepository:
    """Agents in one transaction."""

    def __init__(self, tx: Tx) -> None:
        self.tx = tx

    async def create(
        self, org: str, id: str, name: str, shared: bool, model: str | None, at: int
    ) -> Agent | None:
        """A new agent of `org`; None when there is no such org."""
        agent = {"id": id, "name": name, "shared": shared, "model": model, "createdAt": at}
        row = await self.tx.row("create_agent", org=org, agent=agent)
        return None if row is None else record(Agent, row["agent"])

    async def find(self, org: str, ids: Sequence[str]) -> dict[str, Agent]:
        """The agents of `org` among `ids`, by id."""
        rows = await self.tx.rows("find_agents", org=org, ids=list(ids))
        return {row["agent"]["id"]: record(Agent, row["agent"]) for row in rows}

    async def page(self, org: str, offset: int, limit: int) -> list[Agent]:
        """A page of the org's agents, in `list_agents`' order."""
        rows = await self.tx.rows("list_agents", org=org, offset=offset, limit=limit)
        return [record(Agent, row["agent"]) for row in rows]

    async def promoted(self, session: str) -> str | None:
        """The id of the agent a subagent session was promoted to, if it was."""
        row = await self.tx.row("promoted_agent", session=session)
        return None if row is None else str(row["id"])

    async def mark_promoted(self, session: str, agent: str, at: int) -> None:
        """Record that `session` was promoted to `agent` at `at`."""
        await self.tx.row("mark_promotion", session=session, agent=agent, at=at)
