"""Sessions: creating them, reading their views, and the memory commands of S12-S17, each as
one transaction. A person reaches only their own sessions; a service token all of its org's."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from app.errors import Forbidden, NotFound, SessionConflict, ValidationError
from app.memory.ids import ITEM_DIGITS, ITEM_PREFIX, item_id, new_head, new_id, now_ms
from app.memory.model_names import check_model_name
from app.memory.sessions.commands import (
    Command,
    Configure,
    Forget,
    Refresh,
    Remember,
    check_remember,
)
from app.memory.sessions.kept import KeptView, KeptViews
from app.memory.values import (
    ITEM_FIELDS,
    SESSION_KINDS,
    Change,
    Item,
    Principal,
    SessionView,
    turn_json,
    turn_record,
)
from app.store.catalog import together
from app.store.database import Database, Tx, read_whole


async def memory_at(
    tx: Tx, who: Principal, versions: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """The memory (entries and processed items) as it was at each version, derived from the
    history in one statement. Heads are read from the kept state instead (`load_views`)."""
    rows = await tx.rows("memory_at", **who.scope(), versions=list(versions))
    return {row["vid"]: row for row in rows}


async def load_views(
    tx: Tx, who: Principal, ids: Sequence[str], items: bool = True
) -> dict[str, SessionView]:
    """Session views by id, in one statement over the kept state (no history walked); ids the
    caller may not reach (another org's, another member's) are simply absent. Without `items`
    each entry names its sources' ids only (`source_items` is None): all a JSON view shows."""
    return views_of(await view_rows(tx, who, ids, items))


def views_of(rows: Sequence[dict[str, Any]]) -> dict[str, SessionView]:
    return {row["session"]["id"]: SessionView.from_record(row) for row in rows}


async def view_rows(
    tx: Tx, who: Principal, ids: Sequence[str], items: bool = True, turns: bool = False,
    fields: tuple[str, ...] = ITEM_FIELDS,
) -> list[dict[str, Any]]:
    """`session_views`' rows, each read whole between two commits: a view that a write changed
    while it was read (its revision moved) is read again (see session_views.cypher). With
    `items`, each entry has its sources' items (their properties in `fields`: see
    `Item.from_row`); with `turns` too, each row also has the turns its sources cite
    (`turns`)."""
    return await read_whole(
        lambda some: tx.rows(
            "session_views", **who.scope(), ids=some, items=items or turns, turns=turns,
            itemFields=list(fields),
        ),
        ids,
        key=lambda row: str(row["session"]["id"]),
        settled=lambda row: bool(row["session"]["revision"] == row["revisionAfter"]),
    )


async def load_view(
    tx: Tx, who: Principal, session_id: str, items: bool = True
) -> SessionView:
    views = await load_views(tx, who, [session_id], items)
    if session_id not in views:
        raise NotFound(f"no session {session_id}")
    return views[session_id]


async def with_view(
    tx: Tx, who: Principal, session_id: str, name: str, items: bool = True, **params: Any
) -> tuple[dict[str, Any], SessionView] | None:
    """Statement `name`, then the session's view after it (with its sources' items, unless not
    `items`), in one round trip (`together`): its row and the view, or None when `name`
    answered no row. Run under the session's lock,
    the view cannot move while it is read; were it read unsettled all the same, it is read
    again."""
    scope = who.scope()
    # `params` may name the caller's scope again, never widen or change it
    changed = [key for key, value in scope.items() if params.get(key, value) != value]
    if changed:
        raise ValueError(f"{', '.join(changed)} would change the caller's scope")
    params = scope | params
    row = await tx.row(together(name, "session_views"), **params, ids=[session_id],
                       items=items, turns=False, itemFields=list(ITEM_FIELDS))
    if row is None:
        return None
    if row["session"]["revision"] != row["revisionAfter"]:
        return row, await load_view(tx, who, session_id, items)
    return row, SessionView.from_record(row)


async def lock(
    tx: Tx, who: Principal, session_id: str, key: str | None = None
) -> dict[str, Any]:
    """Lock the session for this transaction, then read its state (head, revision, ...), and
    with a `key` that key's entry as it stands (`current`), all in one statement."""
    state = await tx.row("lock_session", **who.scope(), id=session_id, key=key)
    if state is None:
        raise NotFound(f"no session {session_id}")
    return state


def check_expected(state: dict[str, Any], expected: str, revision: int) -> None:
    """S12: the client's head and revision must be the session's current ones."""
    if state["head"] != expected:
        raise SessionConflict(
            f"the session's head is {state['head']}, not {expected}: read the session again"
        )
    if state["revision"] != revision:
        raise SessionConflict(
            f"the session's revision is {state['revision']}, not {revision}: read it again"
        )


async def branch_item_ids(tx: Tx, session_id: str, ids: Sequence[str]) -> list[dict[str, Any]]:
    """Those of `ids` that are items on the branch of the session's head, with their turn."""
    return await tx.rows("branch_item_ids", id=session_id, ids=list(ids)) if ids else []


async def fresh_item_ids(tx: Tx, state: dict[str, Any], session_id: str, count: int) -> list[str]:
    """Ids `i-NN` for the next `count` items of a branch, skipping any a client already took
    (looked for only where a client ever chose an id)."""
    first_seq = state["items"] + 1
    wanted = [item_id(first_seq + n) for n in range(count)]
    if not state["clientItemIds"]:
        return wanted
    taken = {row["id"] for row in await branch_item_ids(tx, session_id, wanted)}
    return [
        candidate if candidate not in taken else f"{candidate}-{new_id('x')[-6:]}"
        for candidate in wanted
    ]


def session_person(who: Principal, person: str | None) -> str:
    """Whom a new session is with: a person starts their own; a service token names one."""
    if who.person is None:
        if person is None:
            raise ValidationError("a service token names the person of a new session", "person")
        return person
    if person is not None and person != who.person:
        raise Forbidden("a person starts sessions of their own only")
    return who.person


@dataclass
class Sessions:
    """The session-memory operations of the service.

    `kept` holds, per session, the view this process last answered (a command's or a read's;
    app/memory/sessions/kept.py). A view at a revision stays what it is, but for the org's settings:
    every change to what it shows moves the session's revision."""

    db: Database
    kept: KeptViews = field(repr=False)
    # S16's Refresh: consolidation, which runs above session memory (`Consolidation.refresh`)
    refresh: Callable[[Principal, str], Awaitable[SessionView]] = field(repr=False)

    async def list_sessions(
        self, who: Principal, agent: str | None, offset: int, limit: int
    ) -> list[SessionView]:
        async def work(tx: Tx) -> list[SessionView]:
            rows = await tx.rows(
                "list_sessions", **who.scope(), agent=agent, offset=offset, limit=limit
            )
            ids = [row["id"] for row in rows]
            views = await load_views(tx, who, ids, items=False)  # listed as JSON
            return [views[i] for i in ids if i in views]

        return await self.db.read(work)

    async def create_session(
        self,
        who: Principal,
        agent: str,
        kind: str | None,
        parent: str | None,
        person: str | None,
        model: str | None,
    ) -> SessionView:
        person = session_person(who, person)
        kind = kind or "chat"
        if kind not in SESSION_KINDS:
            raise ValidationError(f"kind must be one of {', '.join(SESSION_KINDS)}", "kind")
        if kind == "subagent" and parent is None:
            raise ValidationError("a subagent session is started from a parent session", "parent")
        session = {
            "id": new_id("ses"),
            "agent": agent,
            "kind": kind,
            "parent": parent,
            "person": person,
            "model": check_model_name(model, "model"),
            "head": new_head(),
            "createdAt": now_ms(),
        }

        async def work(tx: Tx) -> SessionView:
            if not await tx.rows("find_agents", org=who.org, ids=[agent]):
                raise NotFound(f"no agent {agent}")
            if await tx.row("find_person", org=who.org, person=session["person"]) is None:
                raise NotFound(f"no person {session['person']} in your org")
            if parent is not None:
                await load_view(tx, who, parent)
            await tx.row("create_session", org=who.org, session=session)
            return await load_view(tx, who, str(session["id"]))

        return await self.db.write(work)

    async def views(self, who: Principal, ids: Sequence[str]) -> dict[str, SessionView]:
        return await self.db.read(lambda tx: load_views(tx, who, ids))

    async def views_with_turns(
        self, who: Principal, ids: Sequence[str], fields: tuple[str, ...] = ITEM_FIELDS
    ) -> tuple[dict[str, SessionView], dict[str, dict[str, Any]]]:
        """Session views by id, their sources' items read with the properties in `fields`
        (see `Item.from_row`), and the turns their entries' sources cite (as `Turns.find`
        answers them: those the caller may reach), in one statement; or, where this process
        keeps such a view of a session, in one small statement that says whether that session
        moved since (`session_marks`), and one more for those that did."""
        kept = {
            i: k for i in ids
            if (k := self.kept.get(i)) is not None and k.turns is not None and k.serves(fields)
        }

        async def work(tx: Tx) -> list[KeptView]:
            found: list[KeptView] = []
            if kept:
                marks = await tx.rows("session_marks", **who.scope(), ids=list(kept))
                found = [
                    replace(k, view=k.view.at_org(mark["org"]))
                    for mark in marks
                    if (k := kept[mark["id"]]).at(mark["head"], mark["revision"])
                ]
                # Kept views of sessions the caller may not reach are absent, as in a read.
                unread = {mark["id"] for mark in marks} - {k.view.session.id for k in found}
                rest = [i for i in ids if i not in kept or i in unread]
            else:
                rest = list(ids)
            rows = await view_rows(tx, who, rest, turns=True, fields=fields) if rest else []
            return found + [_with_turns(row, fields) for row in rows]

        answered = await self.db.read(work)
        turns: dict[str, dict[str, Any]] = {}
        for one in answered:
            turns.update(one.turns or {})
            self.kept.keep(one if _own_turns(one) else replace(one, turns=None))
        return {one.view.session.id: one.view for one in answered}, turns

    async def view(self, who: Principal, session_id: str, items: bool = True) -> SessionView:
        """The session's view; without `items`, its entries name their sources' ids only."""
        view = await self.db.read(lambda tx: load_view(tx, who, session_id, items))
        return self.kept.keep(KeptView(_read(items), view))

    async def items_by_uid(self, who: Principal, uids: Sequence[str]) -> dict[str, Item]:
        """Items by uid, those of sessions the caller may reach."""

        async def work(tx: Tx) -> dict[str, Item]:
            rows = await tx.rows("find_items", **who.scope(), uids=list(uids))
            return {row["item"]["uid"]: Item.from_record(row["item"]) for row in rows}

        return await self.db.read(work)

    async def histories(self, who: Principal, change_ids: Sequence[str]) -> dict[str, list[Change]]:
        """For each change id, the chain of changes it replaced, newest first."""

        async def work(tx: Tx) -> dict[str, list[Change]]:
            rows = await tx.rows("entry_histories", **who.scope(), ids=list(change_ids))
            return {row["cid"]: [Change.from_record(c) for c in row["changes"]] for row in rows}

        return await self.db.read(work)

    async def command(
        self,
        who: Principal,
        session_id: str,
        expected: str,
        revision: int,
        command: Command,
        items: bool = True,
    ) -> SessionView:
        """S12-S16: one memory command, the one place each transport sends it. Remember, Forget
        and Configure are one transaction each; Refresh consolidates now (`refresh`), whatever
        head and revision it names. A ValidationError names the command's field (`content`);
        without `items`, the view after it names its sources' ids only."""
        if isinstance(command, Refresh):
            return await self.refresh(who, session_id)
        if isinstance(command, Remember):  # S10's scan is CPU work: off the event loop
            command = await asyncio.to_thread(check_remember, command)

        key = None if isinstance(command, Configure) else command.key
        checked = {"id": session_id, "key": key, "expected": expected, "revision": revision}

        # A Configure made at the revision of the view this process last answered needs no
        # view read: it changes no entry, so that view and its row make the view after it.
        # (The turns its sources cite stay what they were: a Configure changes none of them.)
        # A view whose items were read serves a view without them (the sources' ids, which it
        # has: REST's after a nested GraphQL view), and one with them only if it read them all.
        kept = self.kept.get(session_id) if isinstance(command, Configure) else None
        if kept is not None and not (kept.serves(_read(items)) and kept.at(expected, revision)):
            kept = None

        async def work(tx: Tx) -> KeptView:
            name, params = _change(who, command)  # per attempt (its time: record_memory_edit)
            if kept is not None:
                row = await tx.row(name, **who.scope(), **checked, **params)
                if row is not None:
                    return replace(kept, view=kept.view.configured(row))
            else:
                # One statement: the lock, the check, the change and the view after it. A
                # Configure takes the lock itself; record_memory_edit runs under lock_session's.
                first = name if isinstance(command, Configure) else together("lock_session", name)
                done = await with_view(tx, who, session_id, first, items, **checked, **params)
                if done is not None:
                    return KeptView(_read(items), done[1])
            # It changed nothing: the lock's state says why, or, where a client ever chose an
            # item id, which id the edit's item takes.
            state = await lock(tx, who, session_id, key)
            check_expected(state, expected, revision)
            if isinstance(command, Forget) and state["current"] is None:
                raise SessionConflict(f"the session's memory has no key {command.key!r}")
            if name == "record_memory_edit":
                [chosen] = await fresh_item_ids(tx, state, session_id, 1)
                params = {**params, "edit": {**params["edit"], "itemId": chosen}}
            done = await with_view(tx, who, session_id, name, items, **checked, **params)
            if done is None:  # checked above under the lock; only a missing author node is left
                raise RuntimeError(f"{name} wrote nothing on session {session_id}")
            return KeptView(_read(items), done[1])

        return self.kept.keep(await self.db.write(work))


def _read(items: bool) -> tuple[str, ...]:
    """The item properties a view with or without `items` reads (`KeptView.items`)."""
    return ITEM_FIELDS if items else ()


def _with_turns(row: dict[str, Any], fields: tuple[str, ...]) -> KeptView:
    """A view read with the turns its sources cite (view_rows with `turns`)."""
    records = (turn_record(turn) for turn in row["turns"])
    turns = {record["id"]: turn_json(record) for record in records}
    return KeptView(fields, SessionView.from_record(row, fields), turns)


def _own_turns(kept: KeptView) -> bool:
    """Whether each turn a view's sources cite is of the view's own session (see KeptView)."""
    session = kept.view.session.id
    return all(turn["session"]["id"] == session for turn in (kept.turns or {}).values())


def _change(who: Principal, command: Configure | Remember | Forget) -> tuple[str, dict[str, Any]]:
    """The statement that makes a command's change, and its parameters."""
    if isinstance(command, Configure):
        return "configure_session", {
            "setUse": command.set_use,
            "use": command.use,
            "setGenerate": command.set_generate,
            "generate": command.generate,
        }
    if isinstance(command, Forget):  # S14: the change keeps the entry's content and kind
        op, content, kind, status = "forget", None, None, "retracted"
        text = f"Forget {command.key}"
    else:
        op, content, kind, status = "remember", command.content, command.kind, "active"
        text = f"Remember {command.key} ({command.kind}): {command.content}"
    return "record_memory_edit", {"edit": {
        "op": op,
        "key": command.key,
        "content": content,
        "kind": kind,
        "status": status,
        "person": who.person,
        "service": who.service,
        "itemUid": new_id("itm"),
        "itemId": None,  # the branch's next `i-NN`, unless a client ever chose one here
        "itemPrefix": ITEM_PREFIX,
        "itemDigits": ITEM_DIGITS,
        "itemContent": text,
        "head": new_head(),
        "change": new_id("chg"),
        "at": now_ms(),
    }}
