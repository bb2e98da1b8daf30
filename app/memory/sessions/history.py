"""Forks and versions (S3, S4, A7): memory is part of a session's history.

Every head a session ever had is an immutable version; the memory at a version is derived from
the changes on the branch that ends there, and the session keeps the memory of its head (each
entry's CURRENT change, the processed ledger) so that reading it walks nothing. So a fork is a
new session continuing the source's history at a version (its memory copied change by change,
linked to the originals), and going back is a new head whose parent is the old version: nothing
is destroyed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.domain.history import MemoryAt, Version, VersionRef
from app.domain.items import Item
from app.domain.principals import Principal
from app.domain.sessions import Entry, HeadState, SessionView
from app.errors import NotFound
from app.memory.ids import new_head, new_id, now_ms
from app.memory.sessions.sessions import check_expected
from app.store.agent_memory import AgentMemoryRepository
from app.store.database import Database, Tx
from app.store.history import HistoryRepository
from app.store.pages import PageRepository
from app.store.sessions import SessionRepository


async def state_at(
    sessions: SessionRepository, who: Principal, session_id: str, version: str, head: str
) -> HeadState:
    """The memory at a version of the session, as the session keeps its head's (its entries'
    changes, the processed ids and mark): read from the kept state when the version is the
    head, derived from the history otherwise."""
    if version == head:
        return await sessions.head_state(who, session_id)
    return derived_state((await sessions.memory_at(who, [version]))[version])


def derived_state(memory: MemoryAt) -> HeadState:
    """The state a session keeps of its head, from the memory `memory_at` derives."""
    return HeadState(
        changes=tuple(entry.change for entry in memory.entries),
        processed=memory.processed,
        processed_seq=memory.processed_seq,
    )


async def keep_missing_states(db: Database, batch: int = 100) -> int:
    """Derive and keep the head's state of every session made before it was kept, then the
    state each entry keeps (session entries' and agent entries' sources) where an entry was
    made before it kept it (once, at start; each batch in a transaction of its own). How many
    sessions."""
    kept = await _keep_missing_heads(db, batch)
    while await db.write(lambda tx: SessionRepository(tx).keep_missing_entry_states(batch)):
        pass
    while await db.write(lambda tx: AgentMemoryRepository(tx).keep_missing_sources(batch)):
        pass
    return kept


async def _keep_missing_heads(db: Database, batch: int) -> int:
    kept = 0
    while True:

        async def work(tx: Tx) -> int:
            sessions = SessionRepository(tx)
            missing = await sessions.without_kept_state(batch)
            for org, session_id, head in missing:
                who = Principal(org)
                await sessions.lock(who, session_id)
                memory = (await sessions.memory_at(who, [head]))[head]
                await sessions.keep_state(session_id, derived_state(memory), counted=False)
            return len(missing)

        done = await db.write(work)
        kept += done
        if done < batch:
            return kept


@dataclass
class History:
    """Forking, going back, and reading any version."""

    db: Database

    async def fork(self, who: Principal, session_id: str, at: str | None) -> SessionView:
        """A new session whose history and memory are the source's at `at` (default: head)."""

        async def work(tx: Tx) -> SessionView:
            sessions, history = SessionRepository(tx), HistoryRepository(tx)
            # The source's lock makes the fork wait for a writer in flight: one version, whole.
            state = await sessions.lock(who, session_id)
            version = state.head if at is None else at
            if version != state.head:
                await history.version(who, session_id, version)
            memory = await state_at(sessions, who, session_id, version, state.head)
            fork = new_id("ses")
            copies = [(new_id("chg"), change) for change in memory.changes]
            if not await history.fork(who, session_id, fork, version, new_head(), now_ms(),
                                      memory, copies):  # an erasure of its person runs
                raise NotFound(f"no session {session_id}")
            return await sessions.view(who, fork)

        return await self.db.write(work)

    async def revert(
        self, who: Principal, session_id: str, expected: str, revision: int, to: str
    ) -> SessionView:
        """Make history and memory what they were at `to`, as a new head (S12's check first)."""

        async def work(tx: Tx) -> SessionView:
            sessions, history = SessionRepository(tx), HistoryRepository(tx)
            state = await sessions.lock(who, session_id)
            check_expected(state, expected, revision)
            await history.version(who, session_id, to)
            memory = await state_at(sessions, who, session_id, to, state.head)
            await history.revert(session_id, to, new_head(), now_ms())
            await sessions.keep_state(session_id, memory, counted=True)
            return await sessions.view(who, session_id)

        return await self.db.write(work)

    async def versions(
        self, who: Principal, session_ids: Sequence[str]
    ) -> dict[str, list[Version]]:
        return await self.db.read(lambda tx: HistoryRepository(tx).versions(who, session_ids))

    async def memories(self, who: Principal, versions: Sequence[str]) -> dict[str, MemoryAt]:
        """The memory as it was at each version: its entries, newest first, and the items
        consolidation had processed."""
        return await self.db.read(lambda tx: SessionRepository(tx).memory_at(who, versions))

    async def at_version(
        self, who: Principal, session_id: str, version: str, offset: int, limit: int
    ) -> tuple[VersionRef, list[Entry], list[str], list[Item]]:
        """A version as it was: the version, its memory entries, processed ids, and items."""

        async def work(tx: Tx) -> tuple[VersionRef, list[Entry], list[str], list[Item]]:
            found = await HistoryRepository(tx).version(who, session_id, version)
            memory = (await SessionRepository(tx).memory_at(who, [version]))[version]
            # A branch's seqs run 1, 2, ... with no gap, so the items after `offset` are those
            # after seq `offset`: a keyset read, no rows skipped.
            items = (await PageRepository(tx).items(who, [version], offset, limit)).get(version, [])
            return found, list(memory.entries), list(memory.processed), items[:limit]

        return await self.db.read(work)
