"""Provenance: the story of one fact of a session, newest change first, with what made each
change and the items it cites (through a fork, on into the entry it was copied from)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.errors import NotFound
from app.memory.sessions import load_view
from app.memory.values import Change, Principal
from app.store.database import Database, Tx


def change_json(change: Change) -> dict[str, Any]:
    """One change as JSON: before and after, what made it, when, and the items it cites."""
    return {
        "id": change.id,
        "op": change.op,
        "maker": change.maker,
        "madeBy": change.made_by,
        "key": change.key,
        "content": change.content,
        "kind": change.kind,
        "status": change.status,
        "before": {
            "content": change.before_content,
            "kind": change.before_kind,
            "status": change.before_status,
        },
        "at": change.at,
        "revision": change.revision,
        "head": change.head,
        "session": change.session,
        "run": change.run,
        "model": change.model,
        "cites": [item.to_json() for item in change.cites],
    }


@dataclass
class Provenance:
    """Reading where a session's facts came from."""

    db: Database

    async def fact_story(self, who: Principal, session_id: str, key: str) -> list[Change]:
        """The changes behind the entry `key` as it stands now, newest first; NotFound for an
        unknown session (or another member's) or a key the session's memory does not hold."""

        async def work(tx: Tx) -> list[Change]:
            view = await load_view(tx, who, session_id)
            entry = view.memory.entries.get(key)
            if entry is None:
                raise NotFound(f"the session's memory has no key {key!r}")
            rows = await tx.rows("entry_histories", **who.scope(), ids=[entry.change])
            return [Change.from_record(c) for row in rows for c in row["changes"]]

        return await self.db.read(work)
