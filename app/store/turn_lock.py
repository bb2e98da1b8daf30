"""The lock a turn is decided under: the session's lock, and what the turn is decided from,
read under it (a `TurnInput`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from app.domain.items import next_item_ids, untaken
from app.domain.principals import Principal
from app.domain.turns import TurnInput, TurnState
from app.errors import NotFound
from app.store.catalog import together
from app.store.database import Tx
from app.store.reach import ReachRepository, reach_of, read_whole_reach
from app.store.records import state_of
from app.store.sessions import SessionRepository
from app.store.turns import TurnRepository

# The statement that locks a session and reads what a turn needs (its state and its reach).
LOCK_FOR_TURN = together("lock_session", "instruction_entries")


class TurnLock:
    """A session's lock for a turn, in one transaction, reached in the caller's scope."""

    def __init__(self, tx: Tx) -> None:
        self.tx = tx

    async def load(
        self, who: Principal, session_id: str, max_length: int, client_ids: Sequence[str],
        turn_id: str | None, count: int,
    ) -> TurnInput:
        """Lock the session and read what a turn of `count` items is decided from.

        - The session's state and what its instructions can reach, in one round trip with the
          lock (the reach read again while the agent's memory moved, or when a cut inside a tie
          was not `closed`).
        - Where some of the ids its client chose are on the branch already: those items and the
          turn they came in (the turn is a retry or a conflict: nothing more is read).
        - Else the turn `turn_id` names (a completing step continues it), whether its items are
          on the branch (a revert to a version before it leaves them off), and the ids its
          items take where the client chose none: the branch's next, but those the branch or
          the turn's client ids hold.

        One read of the branch answers both which of the client's ids and which of the next ids
        are there (the next only where a client ever chose an id)."""
        row = await self.tx.row(
            LOCK_FOR_TURN, **who.scope(), id=session_id, key=None, reach=max_length,
            wholeTies=False,
        )
        if row is None:
            raise NotFound(f"no session {session_id}")
        state = TurnState(state_of(row, session_id), reach_of(who.org, row),
                          row["agentVersion"], read_whole_reach(row))
        own = state.whole and state.reach.closed  # the reach is the row's own
        if not own:
            reach = await ReachRepository(self.tx).reach(who, session_id, max_length)
            state = replace(state, reach=reach)

        wanted = next_item_ids(state.session.items, count)
        asked = dict.fromkeys([*client_ids, *(wanted if state.session.client_item_ids else ())])
        sessions = SessionRepository(self.tx)
        turns = TurnRepository(self.tx)
        found = await sessions.branch_items(session_id, list(asked))
        sent = set(client_ids)
        existing = [item for item in found if item.id in sent]
        if existing:
            came_in = {item.turn for item in existing}
            first = came_in.pop() if len(came_in) == 1 else None
            try:
                turn = None if first is None else await turns.turn(who, session_id, first)
            except NotFound:  # a turn of the session a fork copied these items from
                turn = None
            return TurnInput(state, own, tuple(existing), turn)

        earlier = None if turn_id is None else await turns.turn(who, session_id, turn_id)
        on_branch = False
        if earlier is not None:
            there = await sessions.branch_items(session_id, earlier.items)
            ids = {item.id for item in there if item.turn == earlier.id}
            on_branch = ids >= set(earlier.items)
        taken = sent | {item.id for item in found}
        return TurnInput(state, own, earlier=earlier, earlier_on_branch=on_branch,
                         generated=tuple(untaken(candidate, taken) for candidate in wanted))
