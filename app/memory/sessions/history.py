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
from typing import Any

from app.errors import NotFound
from app.memory.ids import new_head, new_id, now_ms
from app.memory.sessions.sessions import check_expected, load_view, lock, memory_at, view_rows
from app.memory.values import Entry, Item, Principal, SessionView, entries_of
from app.store.database import Database, Tx


@dataclass(frozen=True)
class Version:
    """A past or present head of a session."""

    id: str
    cause: str
    at: int
    depth: int
    parent: str | None
    reverted_from: str | None
    added: tuple[str, ...]
    current: bool

    @classmethod
    def from_record(cls, row: dict[str, Any]) -> Version:
        return cls(
            id=row["id"],
            cause=row["cause"],
            at=row["at"],
            depth=row["depth"],
            parent=row.get("parent"),
            reverted_from=row.get("revertedFrom"),
            added=tuple(row.get("added") or ()),
            current=bool(row.get("current")),
        )


async def find_version(
    tx: Tx, who: Principal, session_id: str, version: str
) -> dict[str, Any]:
    """A version in the session's history; 404 when the session never had it."""
    row = await tx.row("session_version", **who.scope(), id=session_id, version=version)
    if row is None:
        raise NotFound(f"session {session_id} has no version {version}")
    found: dict[str, Any] = row["version"]
    return found


async def state_at(
    tx: Tx, who: Principal, session_id: str, version: str, head: str
) -> dict[str, Any]:
    """The memory at a version of the session, as `keep_state` keeps it (its entries' changes,
    the processed ids and mark): read from the kept state when the version is the head, derived
    from the history otherwise."""
    if version == head:
        [row] = await view_rows(tx, who, [session_id], items=False)
        changes = [Entry.from_row(entry).change for entry in row["entries"]]
        return {"changes": changes, "processed": row["processed"],
                "processedSeq": row["processedSeq"]}
    return derived_state((await memory_at(tx, who, [version]))[version])


def derived_state(memory: dict[str, Any]) -> dict[str, Any]:
    """The state `keep_state` keeps, from the memory `memory_at` derives."""
    return {
        "changes": [entry["change"] for entry in memory["entries"]],
        "processed": memory["processed"],
        "processedSeq": memory["processedSeq"],
    }


async def keep_state(tx: Tx, session_id: str, state: dict[str, Any], *, counted: bool) -> None:
    """Keep `state` (`state_at`'s, `derived_state`'s) as the state of the session's head; unless
    the change was `counted` already (a revert's new head), it moves the revision (S15)."""
    await tx.row("keep_state", id=session_id, state=state, moves=0 if counted else 1)


async def keep_missing_states(db: Database, batch: int = 100) -> int:
    """Derive and keep the head's state of every session made before it was kept (once, at
    start; each batch in a transaction of its own, under the session's lock). How many."""
    kept = 0
    while True:

        async def work(tx: Tx) -> int:
            rows = await tx.rows("sessions_without_kept_state", batch=batch)
            for row in rows:
                who = Principal(row["org"])
                await lock(tx, who, row["id"])
                memory = (await memory_at(tx, who, [row["head"]]))[row["head"]]
                await keep_state(tx, row["id"], derived_state(memory), counted=False)
            return len(rows)

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
            # The source's lock makes the fork wait for a writer in flight: one version, whole.
            state = await lock(tx, who, session_id)
            version = state["head"] if at is None else at
            if version != state["head"]:
                await find_version(tx, who, session_id, version)
            memory = await state_at(tx, who, session_id, version, state["head"])
            fork = {
                "id": new_id("ses"),
                "at": version,
                "head": new_head(),
                "createdAt": now_ms(),
                "processed": memory["processed"],
                "processedSeq": memory["processedSeq"],
            }
            copies = [{"id": new_id("chg"), "from": change} for change in memory["changes"]]
            await tx.row(
                "fork_session", **who.scope(), source=session_id, fork=fork, copies=copies
            )
            return await load_view(tx, who, str(fork["id"]))

        return await self.db.write(work)

    async def revert(
        self, who: Principal, session_id: str, expected: str, revision: int, to: str
    ) -> SessionView:
        """Make history and memory what they were at `to`, as a new head (S12's check first)."""

        async def work(tx: Tx) -> SessionView:
            state = await lock(tx, who, session_id)
            check_expected(state, expected, revision)
            await find_version(tx, who, session_id, to)
            memory = await state_at(tx, who, session_id, to, state["head"])
            revert = {"to": to, "head": new_head(), "at": now_ms()}
            await tx.row("revert_session", id=session_id, revert=revert)
            await keep_state(tx, session_id, memory, counted=True)
            return await load_view(tx, who, session_id)

        return await self.db.write(work)

    async def versions(
        self, who: Principal, session_ids: Sequence[str]
    ) -> dict[str, list[Version]]:
        async def work(tx: Tx) -> dict[str, list[Version]]:
            rows = await tx.rows("session_versions", **who.scope(), ids=list(session_ids))
            return {row["sid"]: [Version.from_record(v) for v in row["versions"]] for row in rows}

        return await self.db.read(work)

    async def memories(self, who: Principal, versions: Sequence[str]) -> dict[str, list[Entry]]:
        """The memory entries as they were at each version, newest first."""

        async def work(tx: Tx) -> dict[str, list[Entry]]:
            found = await memory_at(tx, who, versions)
            return {v: entries_of(row["entries"]) for v, row in found.items()}

        return await self.db.read(work)

    async def at_version(
        self, who: Principal, session_id: str, version: str, offset: int, limit: int
    ) -> tuple[dict[str, Any], list[Entry], list[str], list[Item]]:
        """A version as it was: the version, its memory entries, processed ids, and items."""

        async def work(tx: Tx) -> tuple[dict[str, Any], list[Entry], list[str], list[Item]]:
            found = await find_version(tx, who, session_id, version)
            memory = (await memory_at(tx, who, [version]))[version]
            # A branch's seqs run 1, 2, ... with no gap, so the items after `offset` are those
            # after seq `offset`: a keyset read, no rows skipped.
            rows = await tx.rows(
                "timeline_page", **who.scope(), versions=[version], after=offset, first=limit
            )
            items = [Item.from_record(i) for row in rows for i in row["items"]][:limit]
            return found, entries_of(memory["entries"]), list(memory["processed"]), items

        return await self.db.read(work)
