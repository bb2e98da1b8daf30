"""The agent memory repository: locking an agent's memory, reading its entries as a reader may
see them (A9), recording a version of changes, and reading its log and entry histories."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from app.domain.agents import (
    SHARED,
    AgentChange,
    AgentEdit,
    AgentEntry,
    AgentRead,
    LogEntry,
    MadeBy,
    listed_key,
)
from app.domain.enums import Maker
from app.errors import NotFound
from app.store.catalog import together
from app.store.database import Tx, read_whole
from app.store.records import record


def reader(org: str, person: str | None) -> dict[str, Any]:
    """The parameters that filter agent entries for a reader: a person sees shared entries and
    their own private ones; no person (a service) sees all (A9)."""
    return {"org": org, "person": person, "all": person is None}


def _settled(row: dict[str, Any]) -> bool:
    """Whether an `agent_entries` row was read whole (no version committed while it was)."""
    return bool(row["version"] == row["versionAfter"])


def _edit_param(edit: AgentEdit, session: str | None) -> dict[str, Any]:
    return {
        "id": f"ach-{uuid.uuid4().hex}",
        "op": edit.op,
        "key": edit.key,
        "owner": edit.owner,
        "content": edit.content,
        "kind": edit.kind,
        "status": edit.status,
        "about": edit.about,
        "visibility": edit.visibility,
        "sources": [{"session": session, "uid": uid} for uid in edit.sources],
        "from": list(edit.promoted_from),
    }


class AgentMemoryRepository:
    """Agent memory in one transaction."""

    def __init__(self, tx: Tx) -> None:
        self.tx = tx

    async def lock_agent(self, org: str, agent: str, person: str | None = None) -> int:
        """Lock the agent's memory for this transaction; answer its current version. For a
        person's write, `person` is locked first: once an erasure of them has begun (or ended)
        they are no person of the org (NotFound), as a session of theirs that would start is
        refused."""
        row = await self.tx.row("lock_agent", org=org, agent=agent, person=person)
        if row is None:
            raise NotFound(f"no agent {agent}")
        if row["gone"]:
            raise NotFound(f"no person {person} in your org")
        return int(row["version"])

    async def entries(
        self, org: str, person: str | None, agents: Sequence[str]
    ) -> dict[str, AgentRead]:
        """For each agent: its memory's version, whether it is shared, and the entries the reader
        may see (the current state, one statement, read again until read whole)."""
        rows = await read_whole(
            lambda some: self.tx.rows("agent_entries", **reader(org, person), agents=some),
            agents,
            key=lambda row: str(row["aid"]),
            settled=_settled,
        )
        return {
            str(row["aid"]): AgentRead(
                row["version"],
                bool(row["shared"]),
                tuple(record(AgentEntry, e) for e in row["agentEntries"]),
            )
            for row in rows
        }

    async def apply(
        self, org: str, agent: str, version: int, maker: MadeBy, edits: Sequence[AgentEdit],
        at: int, session: str | None = None,
    ) -> int:
        """Record `edits` as the next version, made at `at` (the caller holds the agent's lock
        and read `version`); answer the new version. No edit, no version. The edits' sources
        are the uids of items of `session` (None: each of the session that added it)."""
        if not edits:
            return version
        changes = [_edit_param(edit, session) for edit in edits]
        # (the entries keep their sources in the same statement: keep_agent_sources)
        await self.tx.row(
            together("apply_agent_changes", "keep_agent_sources"),
            current=[change["id"] for change in changes],
            cited=[],
            org=org,
            agent=agent,
            version=version + 1,
            at=at,
            maker=maker.kind,
            person=maker.person,
            service=maker.service,
            job=maker.job,
            changes=changes,
        )
        return version + 1

    async def keep_sources(self, cited: Sequence[str], advance: bool = True) -> None:
        """Keep again the sources of the agent entries whose current change cites one of
        `cited` (uids of items just erased: an erased item is no entry's source). With
        `advance`, each of their agents' memory is at a new version; without, the agent part
        of the erasure that follows moves it (erase_agent_entries), once, so no watcher is sent
        the memory half erased."""
        if cited:
            if advance:
                await self.tx.row("advance_citing_agents", cited=list(cited))
            await self.tx.row("keep_agent_sources", current=[], cited=list(cited))

    async def keep_missing_sources(self, batch: int) -> int:
        """Keep the sources of up to `batch` agent entries made before an entry kept them;
        how many."""
        rows = await self.tx.rows("agent_entries_without_kept_sources", batch=batch)
        if not rows:
            return 0
        kept = await self.tx.row(
            "keep_agent_sources", current=[row["change"] for row in rows], cited=[]
        )
        # (what it kept, not what it was given: an entry it cannot keep ends the migration
        # rather than being found again forever)
        return 0 if kept is None else int(kept["keptSources"])

    async def log(
        self, org: str, person: str | None, agent: str, after: int, limit: int
    ) -> list[LogEntry]:
        """A11: the versions after `after` (a keyset), at most `limit`, oldest first."""
        rows = await self.tx.rows(
            "agent_log", **reader(org, person), agent=agent, after=after, limit=limit
        )
        return [
            LogEntry(
                r["version"], r["at"], Maker(r["maker"]), r["person"],
                tuple(listed_key(k["key"], k["owner"] or SHARED) for k in r["keys"]),
            )
            for r in rows
        ]

    async def histories(
        self, org: str, person: str | None, change_ids: Sequence[str]
    ) -> dict[str, list[AgentChange]]:
        """For each current change id, the entry's changes, newest first."""
        rows = await self.tx.rows(
            "agent_entry_histories", **reader(org, person), ids=list(change_ids)
        )
        return {row["cid"]: [record(AgentChange, c) for c in row["changes"]] for row in rows}
