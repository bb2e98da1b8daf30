"""The search repository: full-text matches over the session and agent entries a caller may
read."""

from __future__ import annotations

from collections.abc import Sequence

from app.domain.agents import AgentEntry
from app.domain.principals import Principal
from app.domain.search import Match
from app.store.database import Tx
from app.store.records import entry, record


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
                  entry=entry(row["entry"]))
            if row["source"] == "session"
            else Match(bool(row["exact"]), row["agent"],
                       agent_entry=record(AgentEntry, row["entry"]))
            for row in rows
        ]
