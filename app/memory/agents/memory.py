"""Agent memory (A1, A3, A5-A11): one lasting memory per agent over all its sessions, with no
timeline (A7): a per-agent version that grows by exactly 1 with every change, a log of them,
and every change recorded with what made it. An erasure or retention that takes an entry, or
a source of one, moves the version too, with no change in the log. Each operation is one
transaction.

Persons edit it here (`command`); learning and promotion apply their changes through the same
`AgentMemoryRepository.apply`, so one record and one version rule hold for every maker.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

from app.domain.agents import (
    SHARED,
    AgentChange,
    AgentEdit,
    AgentEntry,
    AgentMemory,
    LogEntry,
    MadeBy,
    listed_key,
)
from app.domain.enums import ChangeOp, Kind, Maker, Status, Visibility
from app.domain.principals import Principal
from app.errors import AgentConflict, NotFound, ValidationError
from app.memory.agents.entries import change_as_seen, owner_of, target_of, view_of
from app.memory.changes.commands import (
    AgentCommand,
    AgentForget,
    AgentRemember,
    check_agent_forget,
    check_agent_remember,
    scanned,
)
from app.memory.ids import now_ms
from app.memory.paging import check_offset
from app.store.agent_memory import AgentMemoryRepository
from app.store.agents import AgentRepository
from app.store.database import Database, Tx
from app.store.principals import PrincipalRepository

MAX_LOG_PAGE = 200



def edit_of(
    who: Principal, entries: Sequence[AgentEntry], command: AgentCommand
) -> AgentEdit | None:
    """The edit a person's Remember or Forget makes of the entries they may see: none for a
    Forget of an entry already retracted (it changes nothing)."""
    if isinstance(command, AgentForget):
        target = target_of(entries, who.person, command.key, command.about)
        if target is None:
            named = listed_key(command.key, SHARED if command.about is None else command.about)
            raise AgentConflict(f"the agent's memory has no entry {named!r}")
        if target.status == Status.RETRACTED:
            return None
        return AgentEdit(
            ChangeOp.FORGET, target.key, target.owner, target.content, target.kind,
            Status.RETRACTED, target.about, target.visibility,
        )
    return AgentEdit(
        ChangeOp.REMEMBER, command.key, owner_of(command.visibility, command.about),
        command.content, Kind(command.kind), Status.ACTIVE, command.about,
        Visibility(command.visibility),
    )


async def memory_of(tx: Tx, who: Principal, agent_id: str) -> AgentMemory:
    """The agent's memory as `who` may see it; 404 for an agent not of their org."""
    found = await AgentMemoryRepository(tx).entries(who.org, who.person, [agent_id])
    if agent_id not in found:
        raise NotFound(f"no agent {agent_id}")
    read = found[agent_id]
    return AgentMemory(view_of(who, read.entries), read.version)


@dataclass
class AgentMemories:
    """Reading and editing agents' memories."""

    db: Database

    async def view(self, who: Principal, agent_id: str) -> AgentMemory:
        return await self.db.read(lambda tx: memory_of(tx, who, agent_id))

    async def views(self, who: Principal, agent_ids: Sequence[str]) -> dict[str, AgentMemory]:
        async def work(tx: Tx) -> dict[str, AgentMemory]:
            found = await AgentMemoryRepository(tx).entries(who.org, who.person, agent_ids)
            return {
                aid: AgentMemory(view_of(who, read.entries), read.version)
                for aid, read in found.items()
            }

        return await self.db.read(work)

    async def command(
        self,
        who: Principal,
        agent_id: str,
        expected: int,
        command: AgentCommand,
    ) -> AgentMemory:
        """A10: a person's Remember or Forget, checked against the expected version (a
        ValidationError names the command's field: `check_agent_remember`). A version is 0 or
        more, so a negative `expected` is bad input on every path, not a stale read."""
        if expected < 0:
            raise ValidationError("expected is an agent memory version: 0 or more", "expected")
        if isinstance(command, AgentRemember):
            command = await scanned(
                partial(check_agent_remember, command, who),
                len(command.key) + len(command.content),
            )
        if isinstance(command, AgentForget):
            command = check_agent_forget(command)

        async def work(tx: Tx) -> AgentMemory:
            memory = AgentMemoryRepository(tx)
            version = await memory.lock_agent(who.org, agent_id, who.person)
            if version != expected:
                raise AgentConflict(
                    f"the agent memory's version is {version}, not {expected}: read it again"
                )
            if command.about is not None and not await PrincipalRepository(tx).has_person(
                who.org, command.about
            ):
                raise ValidationError(f"no person {command.about} in your org", "about")
            read = (await memory.entries(who.org, who.person, [agent_id]))[agent_id]
            edit = edit_of(who, read.entries, command)
            maker = MadeBy(Maker.PERSON, person=who.person, service=who.service)
            edits = [] if edit is None else [edit]  # no edit, no version (`apply`)
            await memory.apply(who.org, agent_id, version, maker, edits, now_ms())
            return await memory_of(tx, who, agent_id)

        return await self.db.write(work)

    async def log(self, who: Principal, agent_id: str, after: int, limit: int) -> list[LogEntry]:
        """A11: the versions after `after`, oldest first, as `who` may see them."""
        check_offset(after, "after")
        if not 1 <= limit <= MAX_LOG_PAGE:
            raise ValidationError(f"limit is between 1 and {MAX_LOG_PAGE}", "limit")
        return await self.read_log(who, agent_id, after, limit)

    async def read_log(
        self, who: Principal, agent_id: str, after: int, limit: int
    ) -> list[LogEntry]:
        """The versions after `after` (a keyset: no version is skipped or counted over), at most
        `limit`, oldest first; the caller checked the bounds."""

        async def work(tx: Tx) -> list[LogEntry]:
            if not await AgentRepository(tx).find(who.org, [agent_id]):
                raise NotFound(f"no agent {agent_id}")
            return await AgentMemoryRepository(tx).log(who.org, who.person, agent_id, after, limit)

        return await self.db.read(work)

    async def histories(
        self, who: Principal, change_ids: Sequence[str]
    ) -> dict[str, list[AgentChange]]:
        """For each current change id, the entry's changes, newest first, each with the sources
        `who` may reach."""
        found = await self.db.read(
            lambda tx: AgentMemoryRepository(tx).histories(who.org, who.person, change_ids)
        )
        return {
            cid: [change_as_seen(who.person, change) for change in chain]
            for cid, chain in found.items()
        }
