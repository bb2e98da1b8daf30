"""The history repository: a session's versions, and the statements that fork it and take it
back to a version."""

from __future__ import annotations

from collections.abc import Sequence

from app.domain.history import Version, VersionRef
from app.domain.principals import Principal
from app.domain.sessions import HeadState
from app.errors import NotFound
from app.store.database import Tx
from app.store.records import record


class HistoryRepository:
    """A session's versions in one transaction, reached in the caller's scope."""

    def __init__(self, tx: Tx) -> None:
        self.tx = tx

    async def version(self, who: Principal, session_id: str, version: str) -> VersionRef:
        """A version in the session's history; NotFound when the session never had it."""
        row = await self.tx.row("session_version", **who.scope(), id=session_id, version=version)
        if row is None:
            raise NotFound(f"session {session_id} has no version {version}")
        found = row["version"]
        return VersionRef(found["id"], found["cause"], found["at"], found["depth"], found["items"])

    async def versions(
        self, who: Principal, session_ids: Sequence[str]
    ) -> dict[str, list[Version]]:
        """Every head each session had, oldest first."""
        rows = await self.tx.rows("session_versions", **who.scope(), ids=list(session_ids))
        return {row["sid"]: [record(Version, v) for v in row["versions"]] for row in rows}

    async def fork(
        self, who: Principal, source: str, fork: str, at: str, head: str, created_at: int,
        memory: HeadState, copies: Sequence[tuple[str, str]],
    ) -> bool:
        """Session `fork`, continuing `source`'s history at version `at` with a new `head`, and
        its memory `memory` copied change by change (`copies`: each copy's id and original's).
        False where an erasure of the source's person runs (nothing made)."""
        row = await self.tx.row(
            "fork_session", **who.scope(), service=who.service, source=source,
            fork={
                "id": fork,
                "at": at,
                "head": head,
                "createdAt": created_at,
                "processed": list(memory.processed),
                "processedSeq": memory.processed_seq,
            },
            copies=[{"id": copy, "from": original} for copy, original in copies],
        )
        return row is not None

    async def revert(self, session_id: str, to: str, head: str, at: int) -> None:
        """A new head of the session whose parent is version `to`."""
        await self.tx.row("revert_session", id=session_id,
                          revert={"to": to, "head": head, "at": at})
