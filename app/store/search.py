"""The search repository: full-text matches over the session and agent entries a caller may
read."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from app.domain.agents import AgentEntry
from app.domain.enums import kind_of, status_of
from app.domain.principals import Principal
from app.domain.search import Match
from app.domain.sessions import Entry
from app.store.database import Tx
from app.store.records import Row, item, record


class SearchRepository:
    """Searching the entries a caller may read, in one transaction."""

    def __init__(self, tx: Tx) -> None:
        self.tx = tx

    async def matches(
        self,
        who: Principal,
        query: str,
        *,
        key: str,
        session: str | None,
        agent: str | None,
        kinds: Sequence[str] | None,
        status: str | None,
    ) -> list[Match]:
        """Every match of `query` (Lucene syntax) among the entries `who` may read, unranked,
        each with whether its key is `key` (whatever the case). `session` keeps that session's
        entries, `agent` that agent's memory and its sessions' entries; `kinds` and `status`
        filter the entries' fields."""
        rows = await self.tx.rows(
            "search_entries",
            **who.scope(),
            query=query,
            exact=key.lower(),
            session=session,
            agent=agent,
            kinds=None if kinds is None else list(kinds),
            status=status,
        )
        return [
            Match(bool(row["exact"]), row["agent"], session=row["session"],
                  entry=unsourced(row["entry"]))
            if row["source"] == "session"
            else Match(bool(row["exact"]), row["agent"],
                       agent_entry=record(AgentEntry, row["entry"]))
            for row in rows
        ]

    async def with_sources(self, matches: Sequence[Match]) -> list[Match]:
        """`matches` with the items their session entries cite (`matches` reads their ids)."""
        changes = sorted({m.entry.change for m in matches if m.entry is not None})
        if not changes:
            return list(matches)
        rows = await self.tx.rows("change_sources", changes=changes)
        cited = {row["id"]: tuple(map(item, row["sources"])) for row in rows}
        return [
            replace(m, entry=replace(m.entry, source_items=cited.get(m.entry.change, ())))
            if m.entry is not None else m
            for m in matches
        ]


def unsourced(row: Row) -> Entry:
    """A session entry as search_entries answers it: its sources' ids, not their items."""
    return Entry(
        key=row["key"], content=row["content"], kind=kind_of(row["kind"]),
        sources=tuple(row["sourceIds"]), source_items=None, updated_at=row["updatedAt"],
        status=status_of(row["status"]), change=row["change"],
    )
