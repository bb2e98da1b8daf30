"""The search repository: full-text matches over session and agent entries, best first."""

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
        session: str | None,
        agent: str | None,
        kinds: Sequence[str] | None,
        status: str | None,
        offset: int,
        limit: int,
    ) -> list[Match]:
        """Up to `limit` matches of `query` (Lucene syntax) from `offset`, best first: an exact
        key first, then by score. `session` keeps that session's entries, `agent` that agent's
        memory and its sessions' entries; `kinds` and `status` filter the entries' fields."""
        rows = await self.tx.rows(
            "search_entries",
            **who.scope(),
            query=query,
            exact=query.lower(),
            session=session,
            agent=agent,
            kinds=None if kinds is None else list(kinds),
            status=status,
            offset=offset,
            limit=limit,
        )
        return [
            Match(float(row["score"]), bool(row["exact"]), row["agent"], session=row["session"],
                  entry=entry(row["entry"]))
            if row["source"] == "session"
            else Match(float(row["score"]), bool(row["exact"]), row["agent"],
                       agent_entry=record(AgentEntry, row["entry"]))
            for row in rows
        ]
