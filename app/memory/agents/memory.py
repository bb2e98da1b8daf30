"""Agent memory (A1, A3, A5-A11): one lasting memory per agent over all its sessions, with no
timeline (A7): a per-agent version that grows by exactly 1 with every change, a log of them,
and every change recorded with what made it. Each operation is one transaction.

Persons edit it here (`command`); learning and promotion apply their changes through the same
`apply`, so one record and one version rule hold for every maker.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from app.errors import AgentConflict, NotFound, ValidationError
from app.memory.agents.entries import (
    AgentChange,
    AgentEntry,
    AgentMemory,
    LogEntry,
    owner_of,
    target_of,
    view_of,
)
from app.memory.ids import new_id, now_ms
from app.memory.sessions.commands import (
    AgentCommand,
    AgentForget,
    AgentRemember,
    check_agent_remember,
)
from app.memory.values import Principal
from app.store.database import Database, Tx, read_whole

MAX_LOG_PAGE = 200


@dataclass(frozen=True)
class NewChange:
    """A change to apply: the entry it writes (key and owner) and its new state."""

    op: str
    key: str
    owner: str
    content: str
    kind: str
    status: str
    about: str | None
    visibility: str
    sources: tuple[tuple[str, str], ...] = ()  # (session id, item uid)
    promoted_from: tuple[str, ...] = ()  # session Change ids, for a promotion

    def to_param(self) -> dict[str, Any]:
        return {
            "id": new_id("ach"),
            "op": self.op,
            "key": self.key,
            "owner": self.owner,
            "content": self.content,
            "kind": self.kind,
            "status": self.status,
            "about": self.about,
            "visibility": self.visibility,
            "sources": [{"session": s, "uid": uid} for s, uid in self.sources],
            "from": list(self.promoted_from),
        }


@dataclass(frozen=True)
class Maker:
    """What made a version: `person` (a person or the org's service), `consolidation` (a
    learning job) or `promotion`."""

    kind: str
    person: str | None = None
    service: str | None = None
    job: str | None = None


def reader(who: Principal) -> dict[str, Any]:
    """The parameters that filter agent entries for `who` (A9)."""
    return {"org": who.org, "person": who.person, "all": who.person is None}


# An agent's memory as a reader sees it: its version, whether it is shared, and the entries.
AgentRead = tuple[int, bool, list[AgentEntry]]


async def read_entries(tx: Tx, who: Principal, agent_ids: Sequence[str]) -> dict[str, AgentRead]:
    """For each agent: its memory's version, whether it is shared, and the entries `who` may
    see (the current state, one statement)."""
    rows = await read_whole(
        lambda some: tx.rows("agent_entries", **reader(who), agents=some),
        agent_ids,
        key=lambda row: str(row["aid"]),
        settled=settled,
    )
    return {str(row["aid"]): agent_read(row) for row in rows}


def settled(row: dict[str, Any]) -> bool:
    """Whether an `agent_entries` row was read whole (no version committed while it was)."""
    return bool(row["version"] == row["versionAfter"])


def agent_read(row: dict[str, Any]) -> AgentRead:
    """An `agent_entries` row as the agent's version, sharing and entries."""
    return (
        row["version"],
        bool(row["shared"]),
        [AgentEntry.from_record(e) for e in row["agentEntries"]],
    )


async def lock_agent(tx: Tx, who: Principal, agent_id: str) -> int:
    """Lock the agent's memory for this transaction; answer its current version."""
    row = await tx.row("lock_agent", org=who.org, agent=agent_id)
    if row is None:
        raise NotFound(f"no agent {agent_id}")
    version: int = row["version"]
    return version


async def apply(
    tx: Tx, org: str, agent_id: str, version: int, maker: Maker, changes: Sequence[NewChange]
) -> int:
    """Record `changes` as the next version (the caller holds the agent's lock and read
    `version`); answer the new version. No change, no version."""
    if not changes:
        return version
    await tx.row(
        "apply_agent_changes",
        org=org,
        agent=agent_id,
        version=version + 1,
        at=now_ms(),
        maker=maker.kind,
        person=maker.person,
        service=maker.service,
        job=maker.job,
        changes=[change.to_param() for change in changes],
    )
    return version + 1


@dataclass
class AgentMemories:
    """Reading and editing agents' memories."""

    db: Database

    async def view(self, who: Principal, agent_id: str) -> AgentMemory:
        return await self.db.read(lambda tx: self._view(tx, who, agent_id))

    async def views(self, who: Principal, agent_ids: Sequence[str]) -> dict[str, AgentMemory]:
        async def work(tx: Tx) -> dict[str, AgentMemory]:
            found = await read_entries(tx, who, agent_ids)
            return {
                aid: AgentMemory(view_of(who, entries), version)
                for aid, (version, _, entries) in found.items()
            }

        return await self.db.read(work)

    @staticmethod
    async def _view(tx: Tx, who: Principal, agent_id: str) -> AgentMemory:
        found = await read_entries(tx, who, [agent_id])
        if agent_id not in found:
            raise NotFound(f"no agent {agent_id}")
        version, _, entries = found[agent_id]
        return AgentMemory(view_of(who, entries), version)

    async def command(
        self,
        who: Principal,
        agent_id: str,
        expected: int,
        command: AgentCommand,
    ) -> AgentMemory:
        """A10: a person's Remember or Forget, checked against the expected version (a
        ValidationError names the command's field: `check_agent_remember`)."""
        if isinstance(command, AgentRemember):  # S10's scan is CPU work: off the event loop
            command = await asyncio.to_thread(check_agent_remember, command, who)

        async def work(tx: Tx) -> AgentMemory:
            version = await lock_agent(tx, who, agent_id)
            if version != expected:
                raise AgentConflict(
                    f"the agent memory's version is {version}, not {expected}: read it again"
                )
            if command.about is not None and not await tx.row(
                "find_person", org=who.org, person=command.about
            ):
                raise ValidationError(f"no person {command.about} in your org", "about")
            entries = (await read_entries(tx, who, [agent_id]))[agent_id][2]
            change = self._change(who, entries, command)
            maker = Maker("person", person=who.person, service=who.service)
            await apply(tx, who.org, agent_id, version, maker, [change])
            return await self._view(tx, who, agent_id)

        return await self.db.write(work)

    @staticmethod
    def _change(who: Principal, entries: list[AgentEntry], command: AgentCommand) -> NewChange:
        if isinstance(command, AgentForget):
            target = target_of(entries, who.person, command.key, command.about)
            if target is None:
                raise AgentConflict(f"the agent's memory has no key {command.key!r}")
            return NewChange(
                "forget", target.key, target.owner, target.content, target.kind, "retracted",
                target.about, target.visibility,
            )
        return NewChange(
            "remember", command.key, owner_of(command.visibility, command.about),
            command.content, command.kind, "active", command.about, command.visibility,
        )

    async def log(self, who: Principal, agent_id: str, after: int, limit: int) -> list[LogEntry]:
        """A11: the versions after `after`, oldest first, as `who` may see them."""
        if after < 0:
            raise ValidationError("after is not negative", "after")
        if not 1 <= limit <= MAX_LOG_PAGE:
            raise ValidationError(f"limit is between 1 and {MAX_LOG_PAGE}", "limit")
        return await self.read_log(who, agent_id, after, limit)

    async def read_log(
        self, who: Principal, agent_id: str, after: int, limit: int
    ) -> list[LogEntry]:
        """The versions after `after` (a keyset: no version is skipped or counted over), at most
        `limit`, oldest first; the caller checked the bounds."""

        async def work(tx: Tx) -> list[LogEntry]:
            if not await tx.rows("find_agents", org=who.org, ids=[agent_id]):
                raise NotFound(f"no agent {agent_id}")
            rows = await tx.rows(
                "agent_log", **reader(who), agent=agent_id, after=after, limit=limit
            )
            return [
                LogEntry(r["version"], r["at"], r["maker"], r["person"], tuple(r["keys"]))
                for r in rows
            ]

        return await self.db.read(work)

    async def histories(
        self, who: Principal, change_ids: Sequence[str]
    ) -> dict[str, list[AgentChange]]:
        """For each current change id, the entry's changes, newest first."""

        async def work(tx: Tx) -> dict[str, list[AgentChange]]:
            rows = await tx.rows("agent_entry_histories", **reader(who), ids=list(change_ids))
            return {
                row["cid"]: [AgentChange.from_record(c) for c in row["changes"]] for row in rows
            }

        return await self.db.read(work)
