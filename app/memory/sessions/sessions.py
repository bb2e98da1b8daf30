"""Sessions: creating them, reading their views, and the memory commands of S12-S17, each as
one transaction. A person reaches only their own sessions; a service token all of its org's."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial

from app.domain.enums import ChangeOp, Kind, SessionKind, Status
from app.domain.history import Change
from app.domain.items import ITEM_FIELDS, Item
from app.domain.principals import Principal
from app.domain.sessions import (
    SESSION_KINDS,
    Edited,
    MemoryEdit,
    NewSession,
    SessionState,
    SessionView,
)
from app.domain.turns import Turn
from app.errors import Forbidden, NotFound, SessionConflict, ValidationError
from app.memory.changes.commands import (
    Command,
    Configure,
    Forget,
    Refresh,
    Remember,
    check_key,
    check_model_name,
    check_remember,
    scanned,
)
from app.memory.ids import new_head, new_id, now_ms
from app.memory.sessions.kept import Kept, KeptView
from app.store.agents import AgentRepository
from app.store.database import Database, Tx
from app.store.principals import PrincipalRepository
from app.store.sessions import SessionRepository


def check_expected(state: SessionState, expected: str, revision: int) -> None:
    """S12: the client's head and revision must be the session's current ones."""
    if state.head != expected:
        raise SessionConflict(
            f"the session's head is {state.head}, not {expected}: read the session again"
        )
    if state.revision != revision:
        raise SessionConflict(
            f"the session's revision is {state.revision}, not {revision}: read it again"
        )


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

    `kept` holds, per session, the view this process last answered (a command's or a read's),
    valid while the session's revision has not moved (app/memory/sessions/kept.py)."""

    db: Database
    kept: Kept = field(repr=False)
    # S16's Refresh: consolidation, which runs above session memory (`Consolidation.refresh`)
    refresh: Callable[[Principal, str], Awaitable[SessionView]] = field(repr=False)

    async def list_sessions(
        self, who: Principal, agent: str | None, offset: int, limit: int
    ) -> list[SessionView]:
        async def work(tx: Tx) -> list[SessionView]:
            sessions = SessionRepository(tx)
            ids = await sessions.list_ids(who, agent, offset, limit)
            views = await sessions.views(who, ids, items=False)  # listed as JSON
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
        kind = SessionKind.CHAT if kind is None else kind
        if kind not in SESSION_KINDS:
            raise ValidationError(f"kind must be one of {', '.join(SESSION_KINDS)}", "kind")
        session_kind = SessionKind(kind)
        if session_kind == SessionKind.SUBAGENT and parent is None:
            raise ValidationError("a subagent session is started from a parent session", "parent")
        session = NewSession(
            id=new_id("ses"),
            agent=agent,
            kind=session_kind,
            parent=parent,
            person=session_person(who, person),
            model=check_model_name(model, "model"),
            head=new_head(),
            created_at=now_ms(),
        )

        async def work(tx: Tx) -> SessionView:
            sessions = SessionRepository(tx)
            if agent not in await AgentRepository(tx).find(who.org, [agent]):
                raise NotFound(f"no agent {agent}")
            if not await PrincipalRepository(tx).has_person(who.org, session.person):
                raise NotFound(f"no person {session.person} in your org")
            if parent is not None:
                await sessions.view(who, parent)
            if not await sessions.create(who.org, session):  # an erasure of them runs
                raise NotFound(f"no person {session.person} in your org")
            return await sessions.view(who, session.id)

        return await self.db.write(work)

    async def views(self, who: Principal, ids: Sequence[str]) -> dict[str, SessionView]:
        """Session views by id, their sources' items read whole; or, where this process keeps
        such a view of every one of them, one small statement that says whether each moved
        since (`session_marks`), and one more for those that did. Where it keeps some only, all
        are read in one statement: a list of sessions costs the same statements however many
        of them this process answered before."""
        kept = {i: k for i in ids if (k := self.kept.view(i)) is not None and k.serves(ITEM_FIELDS)}
        if len(kept) < len(set(ids)):
            kept = {}

        async def read(tx: Tx, rest: list[str]) -> list[KeptView]:
            found = await SessionRepository(tx).views(who, rest)
            return [KeptView(ITEM_FIELDS, view) for view in found.values()]

        answered = await self.db.read(lambda tx: _kept_or_read(tx, who, ids, kept, read))
        for one in answered:
            self.kept.keep_view(one)
        return {one.view.session.id: one.view for one in answered}

    async def views_with_turns(
        self, who: Principal, ids: Sequence[str], fields: tuple[str, ...] = ITEM_FIELDS
    ) -> tuple[dict[str, SessionView], dict[str, Turn]]:
        """Session views by id, their sources' items read with the properties in `fields`
        (see `Item.from_row`), and the turns their entries' sources cite (those the caller may
        reach), in one statement; or, where this process keeps such a view of a session, in one
        small statement that says whether that session moved since (`session_marks`), and one
        more for those that did."""
        kept = {
            i: k for i in ids
            if (k := self.kept.view(i)) is not None and k.turns is not None and k.serves(fields)
        }

        async def read(tx: Tx, rest: list[str]) -> list[KeptView]:
            found = await SessionRepository(tx).views_with_turns(who, rest, fields)
            return [KeptView(fields, view, turns, erasures) for view, turns, erasures in found]

        answered = await self.db.read(lambda tx: _kept_or_read(tx, who, ids, kept, read))
        turns: dict[str, Turn] = {}
        for one in answered:
            turns.update(one.turns or {})
            self.kept.keep_view(one if _own_turns(one) else replace(one, turns=None))
        return {one.view.session.id: one.view for one in answered}, turns

    async def view(self, who: Principal, session_id: str, items: bool = True) -> SessionView:
        """The session's view; without `items`, its entries name their sources' ids only."""
        view = await self.db.read(lambda tx: SessionRepository(tx).view(who, session_id, items))
        return self.kept.keep_view(KeptView(_read(items), view))

    async def items_by_uid(self, who: Principal, uids: Sequence[str]) -> dict[str, Item]:
        """Items by uid, those of sessions the caller may reach."""
        return await self.db.read(lambda tx: SessionRepository(tx).items_by_uid(who, uids))

    async def histories(self, who: Principal, change_ids: Sequence[str]) -> dict[str, list[Change]]:
        """For each change id, the chain of changes it replaced, newest first."""
        return await self.db.read(lambda tx: SessionRepository(tx).histories(who, change_ids))

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
        if isinstance(command, Remember):
            command = await scanned(
                partial(check_remember, command), len(command.key) + len(command.content)
            )
        if isinstance(command, Forget):
            command = Forget(key=check_key(command.key))

        # A command made at the revision of the view this process last answered needs no view
        # read: that view and what the command wrote make the view after it. A Configure
        # changes no entry; a Remember or Forget changes its one entry, whose new state (its
        # source, the edit's item) its statement answers. A view whose items were read serves a
        # view without them (the sources' ids, which it has: REST's after a nested GraphQL
        # view), and one with them only if it read them all.
        kept = self.kept.view(session_id)
        if kept is not None and not (kept.serves(_read(items)) and kept.at(expected, revision)):
            kept = None

        async def configure_at_once(tx: Tx, setting: Configure) -> KeptView | None:
            """The one statement of a Configure that applies (it takes the lock itself);
            None where it changed nothing."""
            sessions = SessionRepository(tx)
            if kept is not None:
                done = await sessions.configure(
                    who, session_id, expected, revision, setting.use, setting.set_use,
                    setting.generate, setting.set_generate,
                )
                return None if done is None else replace(kept, view=kept.view.configured(done))
            view = await sessions.configure_with_view(
                who, session_id, expected, revision, items, setting.use, setting.set_use,
                setting.generate, setting.set_generate,
            )
            return None if view is None else KeptView(_read(items), view)

        async def configure(tx: Tx, setting: Configure) -> KeptView:
            """After `configure_at_once` changed nothing: the lock's state says why."""
            sessions = SessionRepository(tx)
            check_expected(await sessions.lock(who, session_id), expected, revision)
            view = await sessions.configure_with_view(
                who, session_id, expected, revision, items, setting.use, setting.set_use,
                setting.generate, setting.set_generate,
            )
            if view is None:  # checked above under the lock; only a missing session is left
                raise RuntimeError(f"configure_session wrote nothing on session {session_id}")
            return KeptView(_read(items), view)

        async def edit_at_once(tx: Tx, command: Remember | Forget) -> KeptView | None:
            """The one statement of an edit that applies: the lock, the check, the change and
            the view after it (or, from the view kept at its revision, what it wrote); None
            where it changed nothing."""
            if kept is not None:
                done = await SessionRepository(tx).edit(
                    who, session_id, expected, revision, _edit(who, command)
                )
                return None if done is None else _edited(kept, done)
            view = await SessionRepository(tx).edit_with_view(
                who, session_id, expected, revision, items, _edit(who, command), locked=False
            )
            return None if view is None else KeptView(_read(items), view)

        async def edit(tx: Tx, command: Remember | Forget) -> KeptView:
            """After `edit_at_once` changed nothing: the lock's state says why, or, where a
            client ever chose an item id, which id the edit's item takes."""
            sessions = SessionRepository(tx)
            change = _edit(who, command)  # per attempt (its time)
            state = await sessions.lock(who, session_id, command.key)
            check_expected(state, expected, revision)
            if isinstance(command, Forget) and state.current is None:
                raise SessionConflict(f"the session's memory has no key {command.key!r}")
            [chosen] = await sessions.fresh_item_ids(state, 1)
            view = await sessions.edit_with_view(
                who, session_id, expected, revision, items, replace(change, item_id=chosen),
                locked=True,
            )
            if view is None:  # checked above under the lock; only a missing author is left
                raise RuntimeError(f"record_memory_edit wrote nothing on session {session_id}")
            return KeptView(_read(items), view)

        # Most commands apply: their one statement, atomic on its own and writing nothing where
        # it cannot apply, runs in one round trip (auto-commit). Where it changed nothing, a
        # transaction finds out why under the session's lock (a conflict, a Forget of no key,
        # an item id a client took) and applies it where it can.
        done: KeptView | None
        if isinstance(command, Configure):
            setting = command
            done = await self.db.write_once(lambda tx: configure_at_once(tx, setting))
            if done is None:
                done = await self.db.write(lambda tx: configure(tx, setting))
        else:
            change = command
            done = await self.db.write_once(lambda tx: edit_at_once(tx, change))
            if done is None:
                done = await self.db.write(lambda tx: edit(tx, change))
        return self.kept.keep_view(done)


async def _kept_or_read(
    tx: Tx, who: Principal, ids: Sequence[str], kept: dict[str, KeptView],
    read: Callable[[Tx, list[str]], Awaitable[list[KeptView]]],
) -> list[KeptView]:
    """The views of `ids`: those `kept` whose session did not move since (one small statement
    says), with the org's settings now, and the others `read`."""
    found: list[KeptView] = []
    if kept:
        marks = await SessionRepository(tx).marks(who, list(kept))
        found = [
            replace(k, view=k.view.at_org(mark.org))
            for mark in marks
            if (k := kept[mark.id]).still(mark)
        ]
        # Kept views of sessions the caller may not reach are absent, as in a read.
        unread = {mark.id for mark in marks} - {k.view.session.id for k in found}
        rest = [i for i in ids if i not in kept or i in unread]
    else:
        rest = list(ids)
    return found + (await read(tx, rest) if rest else [])


def _read(items: bool) -> tuple[str, ...]:
    """The item properties a view with or without `items` reads (`KeptView.items`)."""
    return ITEM_FIELDS if items else ()


def _edited(kept: KeptView, done: Edited) -> KeptView:
    """The view kept at an edit's revision after the edit (`done`): its entry replaced, and
    of its turns those the entries' sources still cite."""
    view = kept.view.edited(done, kept.items)
    if kept.turns is None:
        return replace(kept, view=view)
    cited = {item.turn for entry in view.memory.entries.values()
             for item in entry.source_items or () if item.turn is not None}
    return replace(kept, view=view,
                   turns={id_: turn for id_, turn in kept.turns.items() if id_ in cited})


def _own_turns(kept: KeptView) -> bool:
    """Whether each turn a view's sources cite is of the view's own session (see KeptView)."""
    session = kept.view.session.id
    return all(turn.session == session for turn in (kept.turns or {}).values())


def _edit(who: Principal, command: Remember | Forget) -> MemoryEdit:
    """How a Remember or Forget is recorded: its change, and the item that records it."""
    if isinstance(command, Forget):  # S14: the change keeps the entry's content and kind
        op, content, kind, status = ChangeOp.FORGET, None, None, Status.RETRACTED
        text = f"Forget {command.key}"
    else:
        op = ChangeOp.REMEMBER
        content, kind, status = command.content, Kind(command.kind), Status.ACTIVE
        text = f"Remember {command.key} ({command.kind}): {command.content}"
    return MemoryEdit(
        op=op,
        key=command.key,
        content=content,
        kind=kind,
        status=status,
        person=who.person,
        service=who.service,
        item_uid=new_id("itm"),
        item_content=text,
        head=new_head(),
        change=new_id("chg"),
        at=now_ms(),
    )
