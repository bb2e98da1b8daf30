"""A12: promoting a subagent session. Its lasting entries (A1 kinds), but those only App tool
results support (A4), become the memory of a new agent of the org, each change linked to the
session change and entry it came from and keeping its sources, all logged as one version made
by `promotion`. One transaction."""

from __future__ import annotations

from dataclasses import dataclass

from app.domain.agents import (
    AGENT_KINDS,
    SHARED,
    Agent,
    AgentEdit,
    AgentMemory,
    MadeBy,
    is_agent_key,
)
from app.domain.enums import ChangeOp, Maker, SessionKind, Status, Visibility
from app.domain.items import outside_data
from app.domain.principals import Principal
from app.errors import SessionConflict
from app.memory.agents.agents import create_agent
from app.memory.agents.memory import memory_of
from app.memory.changes.commands import check_agent_name
from app.memory.ids import now_ms
from app.store.agent_memory import AgentMemoryRepository
from app.store.agents import AgentRepository
from app.store.database import Database, Tx
from app.store.sessions import SessionRepository


@dataclass
class Promotion:
    """Turning a subagent into an agent of its own."""

    db: Database

    async def promote(
        self, who: Principal, session_id: str, name: str | None
    ) -> tuple[Agent, AgentMemory]:
        if name is not None:
            # the request's own input first, before the session it names, as on every path
            check_agent_name(name)

        async def work(tx: Tx) -> tuple[Agent, AgentMemory]:
            agents = AgentRepository(tx)
            sessions = SessionRepository(tx)
            state = await sessions.lock(who, session_id)
            if state.kind != SessionKind.SUBAGENT:
                raise SessionConflict(
                    f"session {session_id} is a {state.kind} session: only a subagent is "
                    "promoted"
                )
            earlier = await agents.promoted(session_id)
            if earlier is not None:
                raise SessionConflict(
                    f"session {session_id} was promoted already, to agent {earlier}"
                )
            view = await sessions.view(who, session_id)
            lasting = [
                entry for entry in view.memory.entries.values()
                if entry.status == Status.ACTIVE and entry.kind in AGENT_KINDS
                and not outside_data(entry.items())  # A4, as learning drops such a change
            ]
            unfit = sorted(entry.key for entry in lasting if not is_agent_key(entry.key))
            if unfit:
                raise SessionConflict(
                    f"the keys {', '.join(unfit)} of session {session_id} have an @, which no "
                    "agent memory key has (a private entry is listed as key@person): remember "
                    "those entries under other keys to promote the session"
                )
            default = f"subagent of {session_id}"
            agent = await create_agent(
                tx, who, default if name is None else name, False, view.session.model
            )
            edits = [
                AgentEdit(
                    ChangeOp.REMEMBER, entry.key, SHARED, entry.content, entry.kind, Status.ACTIVE,
                    None, Visibility.SHARED,
                    sources=tuple(item.uid for item in entry.items()),
                    promoted_from=(entry.change,),
                )
                for entry in lasting
            ]
            maker = MadeBy(Maker.PROMOTION, person=who.person, service=who.service)
            # each source is cited in the session that added it: a fork's entry may rest on
            # items of the session it was forked from, which outlive the fork
            await AgentMemoryRepository(tx).apply(who.org, agent.id, 0, maker, edits, now_ms())
            await agents.mark_promoted(session_id, agent.id, now_ms())
            return agent, await memory_of(tx, who, agent.id)

        return await self.db.write(work)
