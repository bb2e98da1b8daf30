"""The page repository: keyset pages of the lists that grow with history (a session's timeline,
turns, runs and versions, an entry's changes, an agent's sessions and learning jobs).

Each read takes the sort key of the last row of the previous page (`after`, None for the first
page) and `first`, and answers at most `first + 1` rows per parent, in one statement for all the
parents asked at once: the one more row tells the caller there is a next page. No statement
skips rows: each starts where its key says.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.domain.agents import Agent, AgentChange
from app.domain.history import Change, Version
from app.domain.items import Item
from app.domain.principals import Principal
from app.store.agent_memory import reader
from app.store.database import Tx
from app.store.records import item, record

Key = Sequence[Any] | None


class PageRepository:
    """Keyset pages in one transaction, reached in the caller's scope."""

    def __init__(self, tx: Tx) -> None:
        self.tx = tx

    async def _lists(
        self, statement: str, parent: str, column: str, **params: Any
    ) -> dict[str, list[Any]]:
        """Each parent's list from one statement answering `parent` and a list `column`."""
        rows = await self.tx.rows(statement, **params)
        return {row[parent]: list(row[column]) for row in rows}

    async def items(
        self, who: Principal, versions: Sequence[str], after: int | None, first: int
    ) -> dict[str, list[Item]]:
        """The timeline as it was at each version (a head: the timeline now), oldest first:
        the items after seq `after`."""
        found = await self._lists("timeline_page", "vid", "items", **who.scope(),
                                  versions=list(versions), after=after, first=first)
        return {vid: [item(i) for i in rows] for vid, rows in found.items()}

    async def versions(
        self, who: Principal, sessions: Sequence[str], after: Key, first: int
    ) -> dict[str, list[Version]]:
        """Every head each session had, oldest first, after the key (at, depth, id)."""
        found = await self._lists("session_versions_page", "sid", "versions", **who.scope(),
                                  ids=list(sessions), after=_key(after), first=first)
        return {sid: [record(Version, v) for v in rows] for sid, rows in found.items()}

    async def run_ids(
        self, who: Principal, sessions: Sequence[str], after: Key, first: int
    ) -> dict[str, list[str]]:
        """Each session's consolidation runs, newest first, after the key (queuedAt, id)."""
        return await self._lists("session_runs_page", "sid", "runs", **who.scope(),
                                 ids=list(sessions), after=_key(after), first=first)

    async def turn_ids(
        self, who: Principal, sessions: Sequence[str], after: Key, first: int
    ) -> dict[str, list[str]]:
        """Each session's turns, oldest first, after the key (at, id)."""
        return await self._lists("session_turns", "sid", "turns", **who.scope(),
                                 ids=list(sessions), after=_key(after), first=first)

    async def changes(
        self, who: Principal, change_ids: Sequence[str], after: str | None, first: int
    ) -> dict[str, list[Change] | None]:
        """For each entry's current change, its story newest first, after change `after`; None
        where `after` is no change of that story (another list's cursor)."""
        rows = await self.tx.rows("entry_changes_page", **who.scope(),
                                  ids=list(change_ids), after=after, first=first)
        return {row["cid"]: None if row["changes"] is None
                else [record(Change, c) for c in row["changes"]] for row in rows}

    async def agent_changes(
        self, who: Principal, change_ids: Sequence[str], after: str | None, first: int
    ) -> dict[str, list[AgentChange] | None]:
        """For each agent entry's current change, its story newest first, after `after`; None
        where `after` is no change of that story (another list's cursor)."""
        rows = await self.tx.rows("agent_entry_changes_page", **reader(who.org, who.person),
                                  ids=list(change_ids), after=after, first=first)
        return {row["cid"]: None if row["changes"] is None
                else [record(AgentChange, c) for c in row["changes"]] for row in rows}

    async def agent_session_ids(
        self, who: Principal, agents: Sequence[str], after: Key, first: int
    ) -> dict[str, list[str]]:
        """Each agent's sessions the caller may reach, oldest first, after (createdAt, id)."""
        return await self._lists("agent_sessions", "aid", "ids", **who.scope(),
                                 agents=list(agents), after=_key(after), first=first)

    async def job_ids(
        self, who: Principal, agents: Sequence[str], after: Key, first: int
    ) -> dict[str, list[str]]:
        """Each agent's learning jobs, newest first, after the key (queuedAt, id)."""
        return await self._lists("agent_jobs_page", "aid", "jobs", org=who.org,
                                 agents=list(agents), after=_key(after), first=first)

    async def session_ids(
        self, who: Principal, agent: str | None, after: Key, first: int
    ) -> list[str]:
        """The org's sessions the caller may reach (one agent's, with `agent`), oldest first,
        after the key (createdAt, id)."""
        rows = await self.tx.rows("sessions_page", **who.scope(), agent=agent,
                                  after=_key(after), first=first)
        return [row["id"] for row in rows]

    async def agents(self, who: Principal, after: Key, first: int) -> list[Agent]:
        """The org's agents, oldest first, after the key (createdAt, id)."""
        rows = await self.tx.rows("agents_page", org=who.org, after=_key(after), first=first)
        return [record(Agent, row["agent"]) for row in rows]


def _key(after: Key) -> list[Any] | None:
    return None if after is None else list(after)
