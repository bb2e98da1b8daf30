"""The turn repository: recording a turn where its session is as it was decided at (under the
lock of app/store/turn_lock.py, or at a snapshot's state), and reading turns back, as typed
values."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.domain.items import Item
from app.domain.principals import Principal
from app.domain.turns import NewRun, NewTurn, Recorded, Turn, TurnState
from app.errors import NotFound
from app.store.catalog import together
from app.store.database import Tx
from app.store.records import item, record

# The statement that locks a session and records a turn when the session is still as a
# snapshot had it, answering no row otherwise: atomic on its own (Database.write_once).
RECORD_AT_ONCE = together("take_session_lock", "record_turn")


def turn_params(turn: NewTurn, **guard: Any) -> dict[str, Any]:
    """record_turn's `$turn`, with the revision (and agent memory version) it was decided at."""
    return {
        "id": turn.id,
        "learn": turn.learn,
        "clientItemIds": turn.client_item_ids,
        "status": turn.status,
        "model": turn.model,
        "at": turn.at,
        "head": turn.head,
        "shown": list(turn.shown),
        "saw": list(turn.saw),
        "shownAgent": list(turn.shown_agent),
        "sawAgent": list(turn.saw_agent),
        "items": [
            {"uid": item.uid, "id": item.id, "type": item.type, "role": item.role,
             "content": item.content, "app": item.app, "author": item.author}
            for item in turn.items
        ],
        **guard,
    }


def unmoved(at: TurnState) -> dict[str, Any]:
    """record_turn's guard that the session is still as the snapshot `at` had it: its revision,
    its agent's memory version, its org's settings (as org_settings reads them), and whether
    another version continues its head."""
    org = at.session.org
    return {
        "revision": at.session.revision,
        "agentVersion": at.agent_version,
        "headShared": at.session.head_shared,
        "org": [org.use, org.generate, org.agent_memory,
                org.helper_model is None, org.helper_model or "",
                org.model is None, org.model or ""],
    }


def run_params(run: NewRun | None) -> dict[str, Any] | None:
    return None if run is None else {"id": run.id, "model": run.model, "at": run.at}


class TurnRepository:
    """Turns in one transaction, reached in the caller's scope."""

    def __init__(self, tx: Tx) -> None:
        self.tx = tx

    async def record(
        self, who: Principal, session_id: str, turn: NewTurn, run: NewRun | None,
        state: TurnState, locked: bool,
    ) -> Recorded | None:
        """Record `turn` (and queue its `run`) where the session is still as `state` had it:
        `locked` (the transaction holds the session's lock), at its revision; else (`state` is
        a snapshot) in one statement that takes the lock and checks all the snapshot holds
        (`unmoved`). None where it recorded nothing (the session moved, or is not there for
        `who`)."""
        if locked:
            row = await self.tx.row("record_turn", id=session_id, run=run_params(run),
                                    turn=turn_params(turn, revision=state.session.revision))
        else:
            row = await self.tx.row(RECORD_AT_ONCE, **who.scope(), id=session_id,
                                    run=run_params(run), turn=turn_params(turn, **unmoved(state)))
        if row is None:
            return None
        return Recorded(row["recorded"], row["revisionAfter"], row["headAfter"],
                        row["depthAfter"], row["itemsAfter"])

    async def turn(self, who: Principal, session_id: str, turn: str) -> Turn:
        """A turn of the session with its items' ids, types and Apps; NotFound without it."""
        row = await self.tx.row("turn_view", **who.scope(), id=session_id, turn=turn)
        if row is None:
            raise NotFound(f"no turn {turn} in session {session_id}")
        return record(Turn, row["turn"])

    async def find(self, who: Principal, turn_ids: Sequence[str]) -> dict[str, Turn]:
        """Turns by id, without their items (`items` reads them)."""
        rows = await self.tx.rows("find_turns", **who.scope(), ids=list(turn_ids))
        return {turn["id"]: record(Turn, turn) for row in rows for turn in row["turns"]}

    async def items(self, who: Principal, turn_ids: Sequence[str]) -> dict[str, list[Item]]:
        """The items of turns by id, in their order."""
        rows = await self.tx.rows("turn_items", **who.scope(), ids=list(turn_ids))
        return {row["id"]: [item(i) for i in row["records"]] for row in rows}

    async def turns_of_items(self, uids: Sequence[str]) -> dict[str, str]:
        """The turn id of each item (by uid) that came in a turn."""
        rows = await self.tx.rows("turns_of_items", uids=list(uids))
        return {row["uid"]: row["turn"] for row in rows}
