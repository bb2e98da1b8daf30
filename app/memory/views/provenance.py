"""Provenance: the story of one fact of a session, newest change first, with what made each
change and the items it cites (through a fork, on into the entry it was copied from)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.domain.history import Change
from app.domain.principals import Principal
from app.domain.provenance import Pair, StoryStep
from app.errors import NotFound
from app.store.database import Database, Tx
from app.store.provenance import ProvenanceRepository
from app.store.sessions import SessionRepository


@dataclass
class Provenance:
    """Reading where a session's facts came from."""

    db: Database

    async def fact_story(self, who: Principal, session_id: str, key: str) -> list[Change]:
        """The changes behind the entry `key` as it stands now, newest first; NotFound for an
        unknown session (or another member's) or a key the session's memory does not hold."""

        async def work(tx: Tx) -> list[Change]:
            sessions = SessionRepository(tx)
            view = await sessions.view(who, session_id)
            entry = view.memory.entries.get(key)
            if entry is None:
                raise NotFound(f"the session's memory has no key {key!r}")
            return (await sessions.histories(who, [entry.change])).get(entry.change, [])

        return await self.db.read(work)

    async def stories(
        self, who: Principal, change_ids: Sequence[str]
    ) -> dict[str, list[StoryStep]]:
        """Each entry's story (by the change of its current state), newest first."""
        return await self.db.read(lambda tx: ProvenanceRepository(tx).stories(who, change_ids))

    async def supports(self, who: Principal, uids: Sequence[str]) -> dict[str, Pair]:
        """For each item (by uid), every session and agent entry change that cites it."""
        return await self.db.read(lambda tx: ProvenanceRepository(tx).supports(who, uids))

    async def shown(self, who: Principal, turn_ids: Sequence[str]) -> dict[str, Pair]:
        """For each turn, the session and agent entries it was given, as they then stood."""
        return await self.db.read(lambda tx: ProvenanceRepository(tx).shown(who, turn_ids))
