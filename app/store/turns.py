"""The turn repository: the lock a turn is decided under (the session's state and what its
instructions can reach, app/store/reach.py), recording a turn, and reading turns back, as
typed values."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from app.domain.items import BranchItem, Item, next_item_ids, untaken
from app.domain.principals import Principal
from app.domain.turns import NewRun, NewTurn, Recorded, Turn, TurnInput, TurnState
from app.errors import NotFound
from app.store.catalog import together
from app.store.database import Tx
from app.store.reach import ReachRepository, reach_of, read_whole_reach
from app.store.records import item, record
from app.store.sessions import SessionRepository, state_of

# The statement that locks a session and reads what a turn needs (its state and its reach).
LOCK_FOR_TURN = together("lock_session", "instruction_entries")
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

    async def load(
        self, who: Principal, session_id: str, max_length: int, client_ids: Sequence[str],
        turn_id: str | None, count: int,
    ) -> TurnInput:
        """Lock the session and read what a turn of `count` items is decided from: where some
        of the ids its client chose are on the branch already, those items and the turn they
        came in (the turn is a retry or a conflict: nothing more is read); else the turn
        `turn_id` names (a completing step continues it), whether its items are on the branch,
        and the ids its items take where the client chose none (the branch's next, but those
        the branch or the turn's client ids hold). One read of the branch answers both which of
        the client's ids and which of the next ids are there (the next only where a client ever
        chose an id)."""
        state, own = await self._lock(who, session_id, max_length)
        wanted = next_item_ids(state.session.items, count)
        asked = dict.fromkeys([*client_ids, *(wanted if state.session.client_item_ids else ())])
        found = await SessionRepository(self.tx).branch_items(session_id, list(asked))
        sent = set(client_ids)
        existing = [row for row in found if row.id in sent]
        if existing:
            return TurnInput(state, own, tuple(existing),
                             await self._came_in(who, session_id, existing))
        earlier = None if turn_id is None else await self.turn(who, session_id, turn_id)
        on_branch = earlier is not None and await self._on_branch(session_id, earlier)
        taken = sent | {row.id for row in found}
        return TurnInput(state, own, earlier=earlier, earlier_on_branch=on_branch,
                         generated=tuple(untaken(candidate, taken) for candidate in wanted))

    async def _lock(
        self, who: Principal, session_id: str, max_length: int
    ) -> tuple[TurnState, bool]:
        """Lock the session, then read under the lock its state and what its turn's
        instructions can reach, in one round trip (the reach read again while the agent's
        memory moved, or when a cut inside a tie was not `closed`). Answers the state, and
        whether its reach is the row's own (not read again)."""
        row = await self.tx.row(
            LOCK_FOR_TURN, **who.scope(), id=session_id, key=None, reach=max_length,
            wholeTies=False,
        )
        if row is None:
            raise NotFound(f"no session {session_id}")
        state = TurnState(state_of(row, session_id), reach_of(who.org, row),
                          row["agentVersion"], read_whole_reach(row))
        if state.whole and state.reach.closed:
            return state, True
        reach = await ReachRepository(self.tx).reach(who, session_id, max_length)
        return replace(state, reach=reach), False

    async def _came_in(
        self, who: Principal, session_id: str, existing: Sequence[BranchItem]
    ) -> Turn | None:
        """The turn the items `existing` all came in, where they came in one."""
        turns = {row.turn for row in existing}
        first = turns.pop() if len(turns) == 1 else None
        return None if first is None else await self.turn(who, session_id, first)

    async def _on_branch(self, session_id: str, turn: Turn) -> bool:
        """Whether every item of `turn` is on the branch of the session's head: a revert to a
        version before the turn leaves it on a branch the session no longer continues."""
        found = await SessionRepository(self.tx).branch_items(session_id, turn.items)
        return {row.id for row in found if row.turn == turn.id} >= set(turn.items)

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
