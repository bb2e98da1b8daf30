"""Recording turns (SPEC section 5) and what they were shown (S5, S6). S7: a completed turn
queues its consolidation in the same transaction, to run off the request path."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from app.domain.enums import TurnStatus
from app.domain.items import BranchItem, Item, next_item_ids
from app.domain.principals import Principal
from app.domain.turns import Turn, TurnInput, TurnItem, TurnState
from app.errors import SessionConflict, ValidationError
from app.memory.changes.commands import check_model_name
from app.memory.jobs.learning import queue_learning
from app.memory.sessions.kept import Kept
from app.memory.turns.instructions import Instructions
from app.memory.turns.reach import Plan, plan, shown
from app.store.database import Database, Tx
from app.store.reach import ReachRepository
from app.store.turn_lock import TurnLock
from app.store.turns import TurnRepository

# what a client's turn may be recorded as
TURN_STATUSES = (TurnStatus.COMPLETED, TurnStatus.AWAITING_APPROVAL)


@dataclass(frozen=True)
class Outcome:
    """What recording a turn did: the turn as answered, whether it is new, the run it queued,
    whether it queued learning, and the session's state after it to keep (None: keep none)."""

    turn: Turn
    created: bool
    run: str | None = None
    learning: bool = False
    after: TurnState | None = None


@dataclass
class Turns:
    """Recording turns; `queued_run` and `queued_learning` wake a worker of the pool whose job
    a turn queued (only that pool's: a woken worker claims without looking first).

    A new turn is decided from its session's snapshot where `kept` has one (what the lock read
    as the last turn recorded here left it), and recorded by one statement that locks the
    session and records it only where the session is still as the snapshot had it (its
    revision, its agent's memory version, its org's settings, an unshared head): in an
    auto-commit transaction (one round trip), or, for a turn that also queues learning, in a
    transaction with it. Where that statement wrote nothing, or there is no snapshot, the turn
    is decided in a transaction from what the lock reads (app/memory/sessions/kept.py). Both
    record by the same steps (`work`)."""

    db: Database
    max_length: int
    queued_run: Callable[[], None]
    queued_learning: Callable[[], None]
    kept: Kept = field(repr=False)

    async def record(
        self,
        who: Principal,
        session_id: str,
        items: Sequence[TurnItem],
        model: str | None,
        status: str,
        turn_id: str | None = None,
    ) -> tuple[Turn, bool, str | None]:
        """Record a turn (or complete one that awaited approval). Answers the turn, whether it
        is new, and the consolidation run it queued (if it did); a retry with the same item ids
        answers the first turn unchanged."""
        check_model_name(model, "model")
        if status not in TURN_STATUSES:
            raise ValidationError(f"status is one of {', '.join(TURN_STATUSES)}", "status")
        turn_status = TurnStatus(status)
        client_ids = [item.id for item in items if item.id is not None]
        if len(set(client_ids)) != len(client_ids):
            raise ValidationError("item ids are unique within a turn", "items")
        # A snapshot serves a new turn whose items take the session's next ids (while no client
        # chose one of them).
        fresh = not client_ids and turn_id is None
        snapshot = self.kept.snapshot(session_id) if fresh else None
        if snapshot is not None and snapshot.session.client_item_ids:
            snapshot = None

        async def work(
            tx: Tx, given: TurnInput | None = None, decided: Plan | None = None
        ) -> Outcome | None:
            """Load what the turn is decided from (what the session's lock reads, unless
            `given` a snapshot's), decide it (unless `decided` from the snapshot already), and
            record it: None where a snapshot's turn recorded nothing (the session moved)."""
            turns = TurnRepository(tx)
            found = given if given is not None else await TurnLock(tx).load(
                who, session_id, self.max_length, client_ids, turn_id, len(items)
            )
            state, earlier = found.state, found.earlier
            if found.existing:  # a retry answers the first turn unchanged; else a conflict
                first = found.first
                if first is None or not _sent_again(found.existing, first, items, turn_id):
                    taken = ", ".join(sorted(row.id for row in found.existing))
                    raise SessionConflict(f"item ids already used in this session: {taken}")
                return Outcome(first, False)
            if earlier is not None and earlier.status != TurnStatus.AWAITING_APPROVAL:
                raise SessionConflict(f"turn {turn_id} is {earlier.status}, not awaiting approval")
            if earlier is not None and not found.earlier_on_branch:
                raise SessionConflict(
                    f"turn {turn_id} is not on the session's branch: the session was reverted "
                    "to a version before it"
                )
            if decided is None:
                decided = plan(state, items, found.generated, model, turn_status,
                               self.max_length, turn_id, earlier)
            done = await turns.record(who, session_id, decided.turn, decided.run, state,
                                      locked=given is None)
            if done is None:
                return None
            answer = (
                await turns.turn(who, session_id, decided.turn.id)
                if earlier is not None  # the turn's items are its earlier step's and these
                else decided.turn.recorded(session_id, done.revision)
            )
            learning = decided.learns and await queue_learning(tx, who.org, state.session.agent)
            after = state.after(done) if found.own and fresh else None
            return Outcome(answer, True, decided.run_id, learning, after)

        outcome: Outcome | None = None
        if snapshot is not None:
            # Most turns find the session as the snapshot has it: their one statement, atomic
            # on its own and writing nothing where the session moved, runs in one round trip
            # (auto-commit). A turn that queues learning (a statement more) takes a transaction.
            at = TurnInput(snapshot, own=True,
                           generated=tuple(next_item_ids(snapshot.session.items, len(items))))
            planned = plan(snapshot, items, at.generated, model, turn_status, self.max_length)
            write = self.db.write if planned.learns else self.db.write_once
            outcome = await write(lambda tx: work(tx, at, planned))
        if outcome is None:
            outcome = await self.db.write(work)
        if outcome is None:  # the lock holds the revision; only a missing session is left
            raise RuntimeError(f"record_turn wrote nothing on session {session_id}")
        self.kept.keep_snapshot(session_id, outcome.after)
        if outcome.run is not None:
            self.queued_run()
        if outcome.learning:
            self.queued_learning()
        return outcome.turn, outcome.created, outcome.run

    async def instructions(self, who: Principal, session_id: str) -> Instructions:
        """What a turn of the session would be shown now (GET .../instructions)."""

        async def work(tx: Tx) -> Instructions:
            reach = await ReachRepository(tx).reach(who, session_id, self.max_length)
            return shown(reach, self.max_length)[0]

        return await self.db.read(work)

    async def turn(self, who: Principal, session_id: str, turn: str) -> Turn:
        return await self.db.read(lambda tx: TurnRepository(tx).turn(who, session_id, turn))

    async def turns_of_items(self, uids: Sequence[str]) -> dict[str, str]:
        """The turn id of each item (by uid) that came in a turn."""
        return await self.db.read(lambda tx: TurnRepository(tx).turns_of_items(uids))

    async def find(self, who: Principal, turn_ids: Sequence[str]) -> dict[str, Turn]:
        """Turns by id, without their items (`items` reads them)."""
        return await self.db.read(lambda tx: TurnRepository(tx).find(who, turn_ids))

    async def items(self, who: Principal, turn_ids: Sequence[str]) -> dict[str, list[Item]]:
        """The items of turns by id, in their order."""
        return await self.db.read(lambda tx: TurnRepository(tx).items(who, turn_ids))


def _sent_again(
    existing: Sequence[BranchItem], first: Turn, items: Sequence[TurnItem], turn_id: str | None
) -> bool:
    """Whether the items already on the branch (`existing`, all of the turn `first`) are these
    sent again, by id and by what they hold: a retry of that turn (or of its completing step),
    not a reuse of its ids."""
    client_ids = [item.id for item in items if item.id is not None]
    sent = {item.id: item for item in items}
    same_items = len(existing) == len(items) == len(client_ids) and all(
        (row.type, row.role, row.content)
        == (sent[row.id].type, sent[row.id].role, sent[row.id].content)
        for row in existing
    )
    got = list(first.items)
    if turn_id is None:  # a turn sent again: its items are the whole turn
        return same_items and got == client_ids
    # a completion sent again: the turn is completed, and its items end it
    return (
        same_items and first.id == turn_id and first.status == TurnStatus.COMPLETED
        and got[-len(items):] == client_ids
    )
