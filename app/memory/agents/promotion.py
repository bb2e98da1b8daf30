"""A12: promoting a subagent session. Its lasting entries (A1 kinds) become the memory of a new
agent of the org, each change linked to the session change and entry it came from and keeping
its sources, all logged as one version made by `promotion`. One transaction."""

from __future__ import annotations

from dataclasses import dataclass

from app.domain.agents import Agent
from app.domain.principals import Principal
from app.errors import SessionConflict
from app.memory.agents.agents import create_agent
from app.memory.agents.entries import AGENT_KINDS, SHARED, AgentMemory, view_of
from app.memory.agents.memory import Maker, NewChange, apply, read_entries
from app.memory.ids import now_ms
from app.store.database import Database, Tx
from app.store.sessions import SessionRepository


@dataclass
class Promotion:
    """Turning a subagent into an agent of its own."""

    db: Database

    async def promote(
        self, who: Principal, session_id: str, name: str | None
    ) -> tuple[Agent, AgentMemory]:
        async def work(tx: Tx) -> tuple[Agent, AgentMemory]:
            state = await SessionRepository(tx).lock(who, session_id)
            if state.kind != "subagent":
                raise SessionConflict(
                    f"session {session_id} is a {state.kind} session: only a subagent is "
                    "promoted"
                )
            earlier = await tx.row("promoted_agent", session=session_id)
            if earlier is not None:
                raise SessionConflict(
                    f"session {session_id} was promoted already, to agent {earlier['id']}"
                )
            view = await SessionRepository(tx).view(who, session_id)
            agent = await create_agent(
                tx, who, name or f"subagent of {session_id}", False, view.session.model
            )
            changes = [
                NewChange(
                    "remember", entry.key, SHARED, entry.content, entry.kind, "active", None,
                    "shared",
                    sources=tuple((session_id, item.uid) for item in entry.items()),
                    promoted_from=(entry.change,),
                )
                for entry in view.memory.entries.values()
                if entry.status == "active" and entry.kind in AGENT_KINDS
            ]
            maker = Maker("promotion", person=who.person, service=who.service)
            await apply(tx, who.org, agent.id, 0, maker, changes)
            await tx.row("mark_promotion", session=session_id, agent=agent.id, at=now_ms())
            version, _, entries = (await read_entries(tx, who, [agent.id]))[agent.id]
            return agent, AgentMemory(view_of(who, entries), version)

        return await self.db.write(work)
