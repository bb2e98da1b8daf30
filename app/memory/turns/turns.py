"""Recording turns (SPEC section 5) and what they were shown (S5, S6). S7: a completed turn
queues its consolidation in the same transaction, to run off the request path."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.errors import NotFound, SessionConflict, ValidationError
from app.memory.ids import new_head, new_id, now_ms
from app.memory.jobs.learning import queue_learning, teaches
from app.memory.model_names import check_model_name, resolve_model
from app.memory.sessions.sessions import branch_item_ids, fresh_item_ids
from app.memory.sessions.switches import OrgSettings, switches_of
from app.memory.turns.instructions import Instructions
from app.memory.turns.reach import Reachable, reachable, read_whole_reach
from app.memory.values import Item, Principal, turn_json
from app.store.catalog import maybe, together
from app.store.database import Database, Tx

ITEM_TYPES = ("message", "tool_call", "tool_result", "app_action", "approval")
ROLES = ("user", "assistant", "tool", "system")
TURN_STATUSES = ("completed", "awaiting_approval")


@dataclass(frozen=True)
class TurnItem:
    """An item as a client sends it; `id` is the client's own choice, or None."""

    type: str
    role: str
    content: str
    id: str | None = None
    app: str | None = None


# The statement that locks a session and reads what a turn needs (its state and its reach),
# and the one that also records the turn when the session is still as a snapshot had it.
LOCK_FOR_TURN = together("lock_session", "instruction_entries")
LOCK_AND_RECORD = together("lock_session", "instruction_entries", maybe("record_turn"))
# record_turn's columns in LOCK_AND_RECORD's row: what the session is after the turn.
AFTER = ("recorded", "revisionAfter", "headAfter", "depthAfter", "itemsAfter")


async def lock_for_turn(
    tx: Tx, who: Principal, session_id: str, max_length: int, **record: Any
) -> tuple[dict[str, Any], Reachable, bool]:
    """Lock the session, then read under the lock its state and what its turn's instructions
    can reach, in one round trip (read again while the agent's memory moved, or when a cut
    inside a tie was not `closed`). With `record` (record_turn's `turn` and `run`), the same
    statement records the turn when the session is still at the turn's revision and its
    agent's memory at its version; the row then names it (`recorded`). Answers the row, the
    reach, and whether the reach is the row's own (not read again)."""
    name = LOCK_AND_RECORD if record else LOCK_FOR_TURN
    state = await tx.row(
        name, **who.scope(), id=session_id, key=None, reach=max_length, wholeTies=False,
        **record,
    )
    if state is None:
        raise NotFound(f"no session {session_id}")
    if read_whole_reach(state):
        found = Reachable.from_record(who.org, state)
        if found.closed:
            return state, found, True
    return state, await reachable(tx, who, session_id, max_length), False


class StaleSnapshot(Exception):
    """A turn recorded from a snapshot found the session otherwise than the snapshot had it
    (a change that moves neither its revision nor its agent's memory version, such as the
    org's settings): its transaction is rolled back, and the turn decided again."""


def needs_consolidation(items: Sequence[TurnItem]) -> bool:
    """S8: a turn that only runs an App action (its action and the App's results) ran no
    model, so it teaches nothing."""
    return any(
        not (item.type == "app_action" or (item.type == "tool_result" and item.app))
        for item in items
    )


@dataclass(frozen=True)
class Plan:
    """A turn decided from its session's state and reach: what `record_turn` writes (`turn`),
    the consolidation run it queues, and whether it teaches the agent."""

    turn: dict[str, Any]
    run: dict[str, Any] | None
    learn: bool


# How many sessions' snapshots a process keeps (see `Turns.snapshots`), each one row of
# lock_for_turn: the session's state and its instructions' reach (up to `max_length` of text).
SNAPSHOTS = 1024


@dataclass
class Turns:
    """Recording turns; `queued_run` and `queued_learning` wake a worker of the pool whose job
    a turn queued (only that pool's: a woken worker claims without looking first).

    `snapshots` holds, per session, lock_for_turn's row as the last turn this process recorded
    left it. The next turn decides from it, and records in the statement that locks and reads
    (one statement, where deciding from what the lock reads takes two), if the session's
    revision and its agent's memory version did not move since; else it decides again from what
    that statement read under the lock, as a turn without a snapshot does. Every change of a
    session moves its revision; one of the agent's memory, its version. Anything else the row
    holds that differs (the org's settings, say) rolls the turn back, to be decided again."""

    db: Database
    max_length: int
    queued_run: Callable[[], None]
    queued_learning: Callable[[], None]
    snapshots: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False)

    async def record(
        self,
        who: Principal,
        session_id: str,
        items: Sequence[TurnItem],
        model: str | None,
        status: str,
        turn_id: str | None = None,
    ) -> tuple[dict[str, Any], bool, str | None]:
        """Record a turn (or complete one that awaited approval). Answers the turn view,
        whether it is new, and the consolidation run it queued (if it did); a retry with the
        same item ids answers the first turn unchanged."""
        check_model_name(model, "model")
        if status not in TURN_STATUSES:
            raise ValidationError(f"status is one of {', '.join(TURN_STATUSES)}", "status")
        client_ids = [item.id for item in items if item.id is not None]
        if len(set(client_ids)) != len(client_ids):
            raise ValidationError("item ids are unique within a turn", "items")
        # A snapshot serves a new turn whose items take the session's next ids.
        fresh = not client_ids and turn_id is None

        async def work(
            tx: Tx, snapshot: dict[str, Any] | None
        ) -> tuple[dict[str, Any], bool, str | None, bool, dict[str, Any] | None]:
            # the answer, whether the turn is new, its run, whether learning was queued, and
            # the session's snapshot after it (None: keep none)
            if snapshot is not None and not snapshot["clientItemIds"]:
                reach = Reachable.from_record(who.org, snapshot)
                plan = await self._plan(
                    tx, session_id, snapshot, reach, items, model, status, None, {}
                )
                guard = {"revision": snapshot["revision"], "agentVersion": snapshot["agentVersion"]}
                state, reach, own = await lock_for_turn(
                    tx, who, session_id, self.max_length, turn={**plan.turn, **guard},
                    run=plan.run,
                )
                if state["recorded"] is not None:
                    if {k: v for k, v in state.items() if k not in AFTER} != snapshot:
                        raise StaleSnapshot(session_id)
                    return await self._finish(tx, who, session_id, state, plan, {}, own)
                # the session moved since: decided again, from what the lock read
            else:
                state, reach, own = await lock_for_turn(tx, who, session_id, self.max_length)
            existing = await branch_item_ids(tx, session_id, client_ids)
            if existing:
                turns = {row["turn"] for row in existing}
                if len(existing) == len(items) == len(client_ids) and len(turns) == 1:
                    [first] = turns
                    if first is not None and _same_items(existing, items):
                        answer = await self._view(tx, who, session_id, first)
                        # a retry sends the same turn (or the same completing step) again
                        got = answer["turn"]["items"]
                        step = first == turn_id and got[-len(items) :] == client_ids
                        if got == client_ids or step:
                            return answer, False, None, False, None
                taken = ", ".join(sorted(row["id"] for row in existing))
                raise SessionConflict(f"item ids already used in this session: {taken}")
            earlier: dict[str, Any] = {}  # the turn a completing step continues
            if turn_id is not None:
                earlier = await self._check_awaiting(tx, who, session_id, turn_id)
            plan = await self._plan(
                tx, session_id, state, reach, items, model, status, turn_id, earlier
            )
            after = await tx.row(
                "record_turn", id=session_id, turn={**plan.turn, "revision": state["revision"]},
                run=plan.run,
            )
            if after is None:  # the lock holds the revision; only a missing session is left
                raise RuntimeError(f"record_turn wrote nothing on session {session_id}")
            return await self._finish(
                tx, who, session_id, {**state, **after}, plan, earlier, own and fresh
            )

        snapshot = self.snapshots.get(session_id) if fresh else None
        try:
            done = await self.db.write(lambda tx: work(tx, snapshot))
        except StaleSnapshot:
            done = await self.db.write(lambda tx: work(tx, None))
        answer, created, run_id, learning, after = done
        self.snapshots.pop(session_id, None)
        if after is not None:
            self.snapshots[session_id] = after  # the newest last
            if len(self.snapshots) > SNAPSHOTS:
                del self.snapshots[next(iter(self.snapshots))]
        if run_id is not None:
            self.queued_run()
        if learning:
            self.queued_learning()
        return answer, created, run_id

    async def _plan(
        self,
        tx: Tx,
        session_id: str,
        state: dict[str, Any],
        reach: Reachable,
        items: Sequence[TurnItem],
        model: str | None,
        status: str,
        turn_id: str | None,
        earlier: dict[str, Any],
    ) -> Plan:
        """Decide a turn from its session's state and reach: its items' ids, its model, what
        it is shown, and whether it queues a run and teaches the agent."""
        client_ids = [item.id for item in items if item.id is not None]
        org = OrgSettings.from_record(state["orgSettings"])
        # What a turn was shown is fixed when it starts; a completing step adds nothing.
        shown, saw, saw_agent = (
            reach.shown(self.max_length) if not earlier else (Instructions("", ()), [], [])
        )
        generated = await fresh_item_ids(tx, state, session_id, len(items))
        ids = [item.id or _unique(generated[n], client_ids) for n, item in enumerate(items)]
        run_model = resolve_model(
            earlier.get("model") or model, state["model"], state["agentModel"], org.model
        )
        # S8 over the whole turn, its earlier step included
        model_ran = needs_consolidation(
            [*items, *(TurnItem(t, "assistant", "", app=a) for t, a in zip(
                earlier.get("types", []), earlier.get("apps", []), strict=True))]
        )
        generate = switches_of(state, "orgSettings").generate
        queued = status == "completed" and generate and run_model is not None and model_ran
        learn = status == "completed" and teaches(
            state["kind"], generate, org.agent_memory, only_app_actions=not model_ran
        )
        turn = {
            "id": turn_id or new_id("trn"),
            "learn": learn,
            "clientItemIds": bool(client_ids),
            "status": status,
            "model": run_model,
            "at": now_ms(),
            "head": new_head(),
            "shown": list(shown.keys),
            "saw": saw,
            "shownAgent": list(shown.agent_keys),
            "sawAgent": saw_agent,
            "items": [
                {
                    "uid": new_id("itm"),
                    "id": ids[n],
                    "type": item.type,
                    "role": item.role,
                    "content": item.content,
                    "app": item.app,
                    "author": state["person"] if item.role == "user" else item.role,
                }
                for n, item in enumerate(items)
            ],
        }
        run = {"id": new_id("run"), "model": run_model, "at": turn["at"]} if queued else None
        return Plan(turn, run, learn)

    async def _finish(
        self,
        tx: Tx,
        who: Principal,
        session_id: str,
        row: dict[str, Any],
        plan: Plan,
        earlier: dict[str, Any],
        keep: bool,
    ) -> tuple[dict[str, Any], bool, str | None, bool, dict[str, Any] | None]:
        """After record_turn (its columns in `row`, with lock_for_turn's): queue learning when
        no run was queued (with none, the agent's queue may be empty now, A2), and answer the
        turn; with `keep`, the session's snapshot after it."""
        learning = False
        if plan.run is None and plan.learn:
            learning = await queue_learning(tx, who.org, row["agent"])
        answer = (
            await self._view(tx, who, session_id, str(plan.turn["id"]))
            if earlier  # the turn's items are its earlier step's and these
            else recorded(plan.turn, session_id, row["revisionAfter"])
        )
        run_id = str(plan.run["id"]) if plan.run is not None else None
        return answer, True, run_id, learning, after_turn(row) if keep else None

    async def _check_awaiting(
        self, tx: Tx, who: Principal, session_id: str, turn: str
    ) -> dict[str, Any]:
        """The turn that a completing step continues; 409 unless it awaits an approval."""
        row = await tx.row("turn_view", **who.scope(), id=session_id, turn=turn)
        if row is None:
            raise NotFound(f"no turn {turn} in session {session_id}")
        if row["turn"]["status"] != "awaiting_approval":
            raise SessionConflict(f"turn {turn} is {row['turn']['status']}, not awaiting approval")
        found: dict[str, Any] = row["turn"]
        return found

    async def _view(self, tx: Tx, who: Principal, session_id: str, turn: str) -> dict[str, Any]:
        row = await tx.row("turn_view", **who.scope(), id=session_id, turn=turn)
        if row is None:
            raise NotFound(f"no turn {turn} in session {session_id}")
        return turn_json(row["turn"])

    async def instructions(self, who: Principal, session_id: str) -> Instructions:
        """What a turn of the session would be shown now (GET .../instructions)."""

        async def work(tx: Tx) -> Instructions:
            return (await reachable(tx, who, session_id, self.max_length)).shown(self.max_length)[0]

        return await self.db.read(work)

    async def turn(self, who: Principal, session_id: str, turn: str) -> dict[str, Any]:
        return await self.db.read(lambda tx: self._view(tx, who, session_id, turn))

    async def turns_of_items(self, uids: Sequence[str]) -> dict[str, str]:
        """The turn id of each item (by uid) that came in a turn."""

        async def work(tx: Tx) -> dict[str, str]:
            rows = await tx.rows("turns_of_items", uids=list(uids))
            return {row["uid"]: row["turn"] for row in rows}

        return await self.db.read(work)

    async def find(self, who: Principal, turn_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Turns by id, as `turn_json` answers them, without their items (`items` reads them)."""

        async def work(tx: Tx) -> dict[str, dict[str, Any]]:
            rows = await tx.rows("find_turns", **who.scope(), ids=list(turn_ids))
            return {turn["id"]: turn_json(turn) for row in rows for turn in row["turns"]}

        return await self.db.read(work)

    async def items(self, who: Principal, turn_ids: Sequence[str]) -> dict[str, list[Item]]:
        """The items of turns by id, in their order."""

        async def work(tx: Tx) -> dict[str, list[Item]]:
            rows = await tx.rows("turn_items", **who.scope(), ids=list(turn_ids))
            return {row["id"]: [Item.from_record(i) for i in row["records"]] for row in rows}

        return await self.db.read(work)


def after_turn(row: Mapping[str, Any]) -> dict[str, Any]:
    """lock_for_turn's row as it reads once the turn that `row` recorded (record_turn's
    columns) committed: the session at its new revision and head, with its new items."""
    revision = row["revisionAfter"]
    return {
        **{name: value for name, value in row.items() if name not in AFTER},
        "revision": revision, "readRevision": revision, "readRevisionAfter": revision,
        "head": row["headAfter"], "depth": row["depthAfter"], "items": row["itemsAfter"],
        "headShared": False,  # a new head: no version continues it yet
    }


def recorded(turn: dict[str, Any], session_id: str, revision: int) -> dict[str, Any]:
    """The view of a turn just recorded in one step, from what was written (no read back)."""
    return turn_json({
        **turn,
        "items": [item["id"] for item in turn["items"]],
        "completedAt": turn["at"] if turn["status"] == "completed" else None,
        "session": session_id,
        "revision": revision,
    })


def _same_items(rows: Sequence[dict[str, Any]], items: Sequence[TurnItem]) -> bool:
    """Whether the recorded items (by id) are the ones sent now: a retry, not a reused id."""
    sent = {item.id: item for item in items}
    return all(
        (row["type"], row["role"], row["content"])
        == (sent[row["id"]].type, sent[row["id"]].role, sent[row["id"]].content)
        for row in rows
    )


def _unique(candidate: str, taken: Sequence[str]) -> str:
    return candidate if candidate not in taken else f"{candidate}-{new_id('x')[-6:]}"
