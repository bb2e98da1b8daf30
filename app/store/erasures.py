"""The erasure repository: the record of each erasure, and the statements that make a person's
or a session's content tombstones, one part (a session, an agent) per call."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from app.domain.erasures import Erasure
from app.store.agent_memory import AgentMemoryRepository
from app.store.database import Tx
from app.store.records import record


class ErasureRepository:
    """Erasures in one transaction."""

    def __init__(self, tx: Tx) -> None:
        self.tx = tx

    async def begin(
        self, org: str, person: str, id: str, replacement: str, at: int, by: str | None
    ) -> Erasure | None:
        """The running erasure of the person (resumed), or a new one; None when the org has no
        such person and none is running."""
        row = await self.tx.row(
            "begin_erasure", org=org, person=person,
            erasure={"id": id, "replacement": replacement, "at": at, "by": by},
        )
        return None if row is None else record(Erasure, row["erasure"])

    async def last(self, org: str, person: str) -> Erasure | None:
        """The newest finished erasure of the person."""
        row = await self.tx.row("last_erasure", org=org, person=person)
        return None if row is None else record(Erasure, row["erasure"])

    async def scope(self, org: str, person: str) -> tuple[list[str], list[str]]:
        """The person's sessions and the org's agents."""
        row = await self.tx.row("erasure_scope", org=org, person=person)
        if row is None:
            return [], []
        return list(row["sessions"]), list(row["agents"])

    async def agents_citing(self, org: str, sessions: Sequence[str]) -> list[str]:
        """The org's agents holding an entry that cites one of the sessions' items."""
        row = await self.tx.row("session_erasure_agents", org=org, ids=list(sessions))
        return [] if row is None else list(row["agents"])

    async def deletable_session(
        self, org: str, person: str | None, session: str
    ) -> bool | None:
        """None unless the session is of the org and, for a person, theirs; else whether it is
        erased already."""
        row = await self.tx.row("erasable_session", org=org, person=person, id=session)
        return None if row is None else bool(row["erased"])

    async def erase_session(
        self, org: str, session: str, erasure: str | None, person: str | None,
        replacement: str | None, withheld: str, reach: str | None = None,
    ) -> bool:
        """Make the session's content tombstones under its lock (for `reach`, only a session
        of that person), its entries' keys opaque ones, and its dropped changes' keys
        `withheld`; False for no such session."""
        row = await self.tx.row(
            "erase_session", org=org, id=session, erasure=erasure, person=person,
            replacement=replacement, withheld=withheld, reach=reach,
        )
        if row is None:
            return False
        await self._erased(row["erasedUids"], withheld, advance=False)
        return True

    async def erase_agent_entries(
        self, org: str, agent: str, erasure: str | None, person: str | None,
        replacement: str | None, withheld: str, advance: bool = False,
    ) -> None:
        """Make the agent entries the erasure reaches tombstones with opaque keys, and the
        content of the other entries' changes that rests only on erased items `withheld`,
        under the agent's lock. The memory's version moves where an entry was erased, or with
        `advance` (the agent cites items an erased session held: its entries' sources moved)."""
        await self.tx.row(
            "erase_agent_entries", org=org, agent=agent, erasure=erasure, person=person,
            replacement=replacement, withheld=withheld, advance=advance,
        )

    async def finish(
        self, org: str, erasure: str, person: str | None, replacement: str | None, now: int,
        withheld: str,
    ) -> Erasure:
        """The person's last part (authored items, dropped changes about them, stored ids,
        tokens); the erasure done."""
        row = await self.tx.row(
            "finish_erasure", org=org, erasure=erasure, person=person, replacement=replacement,
            now=now, withheld=withheld,
        )
        assert row is not None, "the erasure was begun"
        await self._erased(row["erasedUids"], withheld)
        return record(Erasure, row["erasure"])

    async def erase_old_items(self, cutoff: int, batch: int, withheld: str) -> tuple[int, int]:
        """Retention: make up to `batch` items older than `cutoff` tombstones; how many it
        found (fewer than `batch`: none is left), and how many of them it erased."""
        row = await self.tx.row("erase_old_items", cutoff=cutoff, batch=batch)
        if row is None:
            return 0, 0
        await self._erased(row["erasedUids"], withheld)
        return int(row["found"]), int(row["erased"])

    async def _erased(self, uids: Sequence[str], withheld: str, advance: bool = True) -> None:
        """After items were erased: the agent entries citing them keep their other sources,
        and what the runs and jobs that read them said of them goes."""
        await AgentMemoryRepository(self.tx).keep_sources(uids, advance=advance)
        if uids:
            await self.tx.row("withhold_readers", uids=list(uids), withheld=withheld)

    async def of_org(self, org: str) -> Sequence[Erasure]:
        """The org's erasures, newest first."""
        rows = await self.tx.rows("list_erasures", org=org)
        return [record(Erasure, row["erasure"]) for row in rows]

    async def mark_expired_items(self, batch: int) -> int:
        """Mark up to `batch` items retention emptied before it marked them; how many it found
        (none: none is left)."""
        row = await self.tx.row("mark_expired_items", batch=batch)
        return 0 if row is None else int(row["found"])

    async def forget_replacements(self) -> int:
        """Drop the opaque id from erasure records done before a finished one dropped it."""
        row = await self.tx.row("forget_erasure_replacements")
        return 0 if row is None else int(row["forgotten"])

    async def dropped_without_about(self, batch: int) -> list[tuple[str, str]]:
        """Up to `batch` learning records of dropped changes that name no person, whose proposal
        does: (the record's element id in this transaction, the proposal)."""
        rows = await self.tx.rows("dropped_without_about", batch=batch)
        return [(str(row["id"]), str(row["proposal"])) for row in rows]

    async def name_dropped_about(self, about: Mapping[str, str]) -> None:
        """Record whom each dropped change (by element id) is about ("" for no one)."""
        await self.tx.row(
            "set_dropped_about", records=[{"id": k, "about": v} for k, v in about.items()]
        )
