"""The session repository: a session's lock and state, its views, the memory at its versions,
and the statements of its memory commands, each answered as typed values."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.domain.enums import kind_of, status_of
from app.domain.history import Change, MemoryAt
from app.domain.items import (
    ITEM_DIGITS,
    ITEM_FIELDS,
    ITEM_PREFIX,
    BranchItem,
    Item,
    next_item_ids,
    untaken,
)
from app.domain.principals import Principal
from app.domain.sessions import (
    Configured,
    Edited,
    Entry,
    HeadState,
    MemoryEdit,
    NewSession,
    Overrides,
    SessionMark,
    SessionState,
    SessionView,
    newest_first,
)
from app.domain.turns import Turn
from app.errors import NotFound
from app.store.catalog import together
from app.store.database import Tx, read_whole
from app.store.records import entry, item, org_settings, record, session_view, state_of


def memory_of(row: Mapping[str, Any]) -> MemoryAt:
    """The memory at a version from memory_at's row."""
    return MemoryAt(
        entries=tuple(newest_first(entry(e) for e in row["entries"])),
        processed=tuple(row["processed"]),
        processed_seq=row["processedSeq"],
    )


class SessionRepository:
    """Sessions in one transaction. A person reaches only their own sessions, a service token
    all of its org's: every statement that reaches sessions filters by the caller's scope."""

    def __init__(self, tx: Tx) -> None:
        self.tx = tx

    async def lock(self, who: Principal, session_id: str, key: str | None = None) -> SessionState:
        """Lock the session for this transaction, then read its state, with a `key` that key's
        entry as it stands (`current`), all in one statement."""
        row = await self.tx.row("lock_session", **who.scope(), id=session_id, key=key)
        if row is None:
            raise NotFound(f"no session {session_id}")
        return state_of(row, session_id)

    async def _view_rows(
        self, who: Principal, ids: Sequence[str], items: bool = True, turns: bool = False,
        fields: tuple[str, ...] = ITEM_FIELDS,
    ) -> list[dict[str, Any]]:
        """`session_views`' rows, each read whole between two commits: a view that a write
        changed while it was read (its revision moved) is read again (see session_views.cypher).
        With `items`, each entry has its sources' items (their properties in `fields`: see
        `Item.from_row`); with `turns` too, each row also has the turns its sources cite."""
        return await read_whole(
            lambda some: self.tx.plain_rows(
                "session_views", **who.scope(), ids=some, items=items or turns, turns=turns,
                itemFields=list(fields),
            ),
            ids,
            key=lambda row: str(row["session"]["id"]),
            settled=lambda row: bool(row["session"]["revision"] == row["revisionAfter"]),
        )

    async def views(
        self, who: Principal, ids: Sequence[str], items: bool = True
    ) -> dict[str, SessionView]:
        """Session views by id, in one statement over the kept state (no history walked); ids
        the caller may not reach (another org's, another member's) are simply absent. Without
        `items` each entry names its sources' ids only (`source_items` is None)."""
        rows = await self._view_rows(who, ids, items)
        return {row["session"]["id"]: session_view(row) for row in rows}

    async def view(self, who: Principal, session_id: str, items: bool = True) -> SessionView:
        """The session's view; NotFound where the caller may not reach it."""
        views = await self.views(who, [session_id], items)
        if session_id not in views:
            raise NotFound(f"no session {session_id}")
        return views[session_id]

    async def views_with_turns(
        self, who: Principal, ids: Sequence[str], fields: tuple[str, ...]
    ) -> list[tuple[SessionView, dict[str, Turn], int]]:
        """Session views with their sources' items (the properties in `fields`), each with the
        turns its sources cite by id and its agent's count of erasures of entries (which
        change what turns were shown), in one statement."""
        rows = await self._view_rows(who, ids, turns=True, fields=fields)
        return [
            (session_view(row, fields),
             {turn.id: turn for turn in map(Turn.from_row, row["turns"])},
             row["agentErasures"])
            for row in rows
        ]

    async def head_state(self, who: Principal, session_id: str) -> HeadState:
        """What the session keeps of its head's memory, read from the kept state."""
        [row] = await self._view_rows(who, [session_id], items=False)
        return HeadState(
            changes=tuple(Entry.from_row(entry).change for entry in row["entries"]),
            processed=tuple(row["processed"]),
            processed_seq=row["processedSeq"],
        )

    async def marks(self, who: Principal, ids: Sequence[str]) -> list[SessionMark]:
        """Where each session stands now, in one small statement; only those the caller may
        reach answer."""
        rows = await self.tx.rows("session_marks", **who.scope(), ids=list(ids))
        return [
            SessionMark(
                row["id"], row["head"], row["revision"], org_settings(row["org"]),
                row["agentErasures"],
            )
            for row in rows
        ]

    async def memory_at(self, who: Principal, versions: Sequence[str]) -> dict[str, MemoryAt]:
        """The memory as it was at each version, derived from the history in one statement.
        A head's is read from the kept state instead (`views`, `head_state`)."""
        rows = await self.tx.rows("memory_at", **who.scope(), versions=list(versions))
        return {row["vid"]: memory_of(row) for row in rows}

    async def list_ids(
        self, who: Principal, agent: str | None, offset: int, limit: int
    ) -> list[str]:
        rows = await self.tx.rows(
            "list_sessions", **who.scope(), agent=agent, offset=offset, limit=limit
        )
        return [row["id"] for row in rows]

    async def create(self, org: str, session: NewSession) -> bool:
        """Create the session; False where an erasure of its person runs (nothing made)."""
        row = await self.tx.row("create_session", org=org, session={
            "id": session.id,
            "agent": session.agent,
            "kind": session.kind,
            "parent": session.parent,
            "person": session.person,
            "model": session.model,
            "head": session.head,
            "createdAt": session.created_at,
        })
        return row is not None

    async def items_by_uid(self, who: Principal, uids: Sequence[str]) -> dict[str, Item]:
        """Items by uid, those of sessions the caller may reach."""
        rows = await self.tx.rows("find_items", **who.scope(), uids=list(uids))
        return {row["item"]["uid"]: item(row["item"]) for row in rows}

    async def histories(
        self, who: Principal, change_ids: Sequence[str]
    ) -> dict[str, list[Change]]:
        """For each change id, the chain of changes it replaced, newest first."""
        rows = await self.tx.rows("entry_histories", **who.scope(), ids=list(change_ids))
        return {row["cid"]: [record(Change, c) for c in row["changes"]] for row in rows}

    async def branch_items(self, session_id: str, ids: Sequence[str]) -> list[BranchItem]:
        """Those of `ids` that are items on the branch of the session's head, with their turn."""
        if not ids:
            return []
        rows = await self.tx.rows("branch_item_ids", id=session_id, ids=list(ids))
        return [
            BranchItem(row["id"], row["uid"], row["turn"], row["type"], row["role"],
                       row["content"])
            for row in rows
        ]

    async def fresh_item_ids(self, state: SessionState, count: int) -> list[str]:
        """Ids `i-NN` for the next `count` items of the session's branch, skipping any a client
        already took (looked for only where a client ever chose an id)."""
        wanted = next_item_ids(state.items, count)
        if not state.client_item_ids:
            return wanted
        taken = {item.id for item in await self.branch_items(state.id, wanted)}
        return [untaken(candidate, taken) for candidate in wanted]

    async def with_view(
        self, who: Principal, session_id: str, name: str, items: bool = True, **params: Any
    ) -> tuple[dict[str, Any], SessionView] | None:
        """Statement `name`, then the session's view after it (with its sources' items, unless
        not `items`), in one round trip (`together`): its row and the view, or None when `name`
        answered no row. Run under the session's lock, the view cannot move while it is read;
        were it read unsettled all the same, it is read again."""
        scope = who.scope()
        # `params` may name the caller's scope again, never widen or change it
        changed = [key for key, value in scope.items() if params.get(key, value) != value]
        if changed:
            raise ValueError(f"{', '.join(changed)} would change the caller's scope")
        params = scope | params
        row = await self.tx.row(together(name, "session_views"), **params, ids=[session_id],
                                items=items, turns=False, itemFields=list(ITEM_FIELDS))
        if row is None:
            return None
        if row["session"]["revision"] != row["revisionAfter"]:
            return row, await self.view(who, session_id, items)
        return row, session_view(row)

    async def configure(
        self, who: Principal, session_id: str, expected: str, revision: int,
        use: bool | None, set_use: bool, generate: bool | None, set_generate: bool,
    ) -> Configured | None:
        """S15's change, where the session is still at `expected` and `revision` (the statement
        takes the lock itself): what it left, or None where it changed nothing."""
        row = await self.tx.row(
            "configure_session", **who.scope(), id=session_id, key=None, expected=expected,
            revision=revision, setUse=set_use, use=use, setGenerate=set_generate,
            generate=generate,
        )
        return None if row is None else configured_of(row)

    async def configure_with_view(
        self, who: Principal, session_id: str, expected: str, revision: int, items: bool,
        use: bool | None, set_use: bool, generate: bool | None, set_generate: bool,
    ) -> SessionView | None:
        """`configure`, and the session's view after it, in one statement."""
        done = await self.with_view(
            who, session_id, "configure_session", items, id=session_id, key=None,
            expected=expected, revision=revision, setUse=set_use, use=use,
            setGenerate=set_generate, generate=generate,
        )
        return None if done is None else done[1]

    async def edit_with_view(
        self, who: Principal, session_id: str, expected: str, revision: int, items: bool,
        edit: MemoryEdit, locked: bool,
    ) -> SessionView | None:
        """S13, S14: record a Remember or Forget, where the session is still at `expected` and
        `revision`, and read the view after it, in one statement; unless the transaction holds
        the session's lock already (`locked`), the statement takes it first. None where it
        changed nothing."""
        name = "record_memory_edit" if locked else together("lock_session", "record_memory_edit")
        done = await self.with_view(
            who, session_id, name, items, id=session_id, key=edit.key, expected=expected,
            revision=revision, edit=edit_params(edit),
        )
        return None if done is None else done[1]

    async def edit(
        self, who: Principal, session_id: str, expected: str, revision: int, edit: MemoryEdit,
    ) -> Edited | None:
        """S13, S14: take the session's lock and record a Remember or Forget, where the session
        is still at `expected` and `revision`, in one statement: what it wrote, or None where it
        changed nothing."""
        row = await self.tx.row(
            together("take_session_lock", "record_memory_edit"), **who.scope(), id=session_id,
            expected=expected, revision=revision, edit=edit_params(edit),
        )
        return None if row is None else edited_of(row)

    async def keep_state(self, session_id: str, state: HeadState, *, counted: bool) -> None:
        """Keep `state` as the state of the session's head; unless the change was `counted`
        already (a revert's new head), it moves the revision (S15)."""
        await self.tx.row("keep_state", id=session_id, state={
            "changes": list(state.changes),
            "processed": list(state.processed),
            "processedSeq": state.processed_seq,
        }, moves=0 if counted else 1)

    async def keep_missing_entry_states(self, batch: int) -> int:
        """Keep on up to `batch` entries made before an entry kept its state the state of its
        CURRENT change; how many."""
        row = await self.tx.row("keep_entry_states", batch=batch)
        return 0 if row is None else int(row["kept"])

    async def without_kept_state(self, batch: int) -> list[tuple[str, str, str]]:
        """Up to `batch` sessions made before their head's state was kept: (org, id, head)."""
        rows = await self.tx.rows("sessions_without_kept_state", batch=batch)
        return [(row["org"], row["id"], row["head"]) for row in rows]


def configured_of(row: Mapping[str, Any]) -> Configured:
    return Configured(
        revision=row["configured"],
        overrides=Overrides(use=row["useOverride"], generate=row["generateOverride"]),
        org=org_settings(row["orgSettings"]),
    )


def edited_of(row: Mapping[str, Any]) -> Edited:
    """What record_memory_edit wrote, and the org's settings the lock before it read."""
    edited = row["edited"]
    written = edited["item"]
    item = Item.from_row([written[f] for f in ITEM_FIELDS] + [None])  # (an edit has no turn)
    key, content, kind, status, at, change, sources = edited["entry"]
    entry = Entry(key=key, content=content, kind=kind_of(kind), sources=tuple(sources),
                  updated_at=at, status=status_of(status), change=change, source_items=(item,))
    return Edited(head=row["recorded"], revision=edited["revision"], entry=entry,
                  org=org_settings(row["orgSettings"]))


def edit_params(edit: MemoryEdit) -> dict[str, Any]:
    """record_memory_edit's `$edit`."""
    return {
        "op": edit.op,
        "key": edit.key,
        "content": edit.content,
        "kind": edit.kind,
        "status": edit.status,
        "person": edit.person,
        "service": edit.service,
        "itemUid": edit.item_uid,
        "itemId": edit.item_id,
        "itemPrefix": ITEM_PREFIX,
        "itemDigits": ITEM_DIGITS,
        "itemContent": edit.item_content,
        "head": edit.head,
        "change": edit.change,
        "at": edit.at,
    }
