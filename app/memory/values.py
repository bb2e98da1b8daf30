"""Domain values: what the service reads and answers, independent of transport and storage."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from app.domain.enums import Kind, SessionKind
from app.memory.sessions.switches import OrgSettings, Overrides, Switches, resolve_switches

KINDS: tuple[Kind, ...] = tuple(Kind)
SESSION_KINDS: tuple[SessionKind, ...] = tuple(SessionKind)


@dataclass(frozen=True)
class Principal:
    """Who a request acts for: a person of an org, or an org's service token (no person), which
    reaches every session of its org and every agent entry. The service itself, working for an
    org (consolidation, learning), acts as a principal with neither."""

    org: str
    person: str | None = None
    service: str | None = None

    def scope(self) -> dict[str, str | None]:
        """The parameters every statement that reaches sessions filters by."""
        return {"org": self.org, "person": self.person}


# An item's properties, as a view reads them (session_views' `$itemFields`), in Item's order.
ITEM_FIELDS = ("uid", "id", "type", "role", "content", "app", "author", "at", "seq")


@cache
def _positions(fields: tuple[str, ...]) -> tuple[int, ...]:
    """Where each of `fields` is in ITEM_FIELDS."""
    return tuple(ITEM_FIELDS.index(f) for f in fields)


@dataclass(frozen=True)
class Item:
    """One entry of a session's timeline."""

    uid: str
    id: str
    type: str
    role: str | None
    content: str | None
    app: str | None
    author: str | None
    at: int
    seq: int
    turn: str | None = None
    turn_known: bool = False  # whether the record said which turn (None: a memory edit's)

    @classmethod
    def from_row(cls, row: Sequence[Any], fields: tuple[str, ...] = ITEM_FIELDS) -> Item:
        """An item as session_views answers it: a list of the properties `fields` names (of
        ITEM_FIELDS, in its order), then its turn's id. A view read for a GraphQL selection
        reads only what it asks (`Query.session`) and leaves every other property None: only
        that selection reads such an item."""
        if fields is ITEM_FIELDS:
            uid, id_, type_, role, content, app, author, at, seq, turn = row
            return cls(uid=uid, id=id_, type=type_, role=role, content=content, app=app,
                       author=author, at=at, seq=seq, turn=turn, turn_known=True)
        read: list[Any] = [None] * len(ITEM_FIELDS)
        for at, value in zip(_positions(fields), row, strict=False):  # (the turn's id last)
            read[at] = value
        uid, id_, type_, role, content, app, author, at, seq = read
        return cls(uid=uid, id=id_, type=type_, role=role, content=content, app=app,
                   author=author, at=at, seq=seq, turn=row[-1], turn_known=True)

    @classmethod
    def from_record(cls, row: Mapping[str, Any]) -> Item:
        return cls(
            uid=row["uid"],
            id=row["id"],
            type=row["type"],
            role=row.get("role"),
            content=row.get("content"),
            app=row.get("app"),
            author=row.get("author"),
            at=row["at"],
            seq=row["seq"],
            turn=row.get("turn"),
            turn_known="turn" in row,
        )


@dataclass(frozen=True)
class Entry:
    """S1: one fact under one key."""

    key: str
    content: str
    kind: str
    sources: tuple[str, ...]
    updated_at: int
    status: str
    change: str = ""  # the id of the change that made this state
    # The sources' items, or None where the view was read without them (their ids only)
    source_items: tuple[Item, ...] | None = ()

    @classmethod
    def from_row(cls, row: Sequence[Any], fields: tuple[str, ...] = ITEM_FIELDS) -> Entry:
        """An entry as session_views answers it: a list, in the order unpacked here, whose
        items are null where the view was read without them (`fields`: as `Item.from_row`)."""
        key, content, kind, status, updated_at, change, source_ids, found = row
        items = None if found is None else tuple(Item.from_row(item, fields) for item in found)
        return cls(key=key, content=content, kind=kind, sources=tuple(source_ids),
                   updated_at=updated_at, status=status, change=change, source_items=items)

    @classmethod
    def from_record(cls, row: Mapping[str, Any]) -> Entry:
        """An entry with its sources as items (`sources`: memory_at, search)."""
        items = tuple(Item.from_record(item) for item in row.get("sources") or ())
        return cls(
            key=row["key"],
            content=row["content"],
            kind=row["kind"],
            sources=tuple(item.id for item in items),
            source_items=items,
            updated_at=row["updatedAt"],
            status=row["status"],
            change=row.get("change") or "",
        )

    def items(self) -> tuple[Item, ...]:
        """The sources' items; an error where the view was read without them (a caller's
        mistake, never the user's)."""
        if self.source_items is None:
            raise RuntimeError(f"entry {self.key!r} was read without its sources' items")
        return self.source_items


def entries_of(records: Iterable[Mapping[str, Any]]) -> list[Entry]:
    """Entries from their records (`Entry.from_record`), newest first."""
    return newest_first(Entry.from_record(r) for r in records)


def newest_first(entries: Iterable[Entry]) -> list[Entry]:
    """Entries newest first, ties by key: the order of every view."""
    return sorted(entries, key=lambda e: (-e.updated_at, e.key))


# A turn as session_views answers it (a list: see its header), by position; `turn_record` names
# them as find_turns does. Its entries and items are read by `Entry.from_row`, `Item.from_row`.
TURN_ROW = ("id", "status", "model", "shown", "shownAgent", "at", "completedAt", "head",
            "revision", "session")


@dataclass(frozen=True)
class Memory:
    """S2: the memory view of one session."""

    entries: Mapping[str, Entry]
    processed: tuple[str, ...]
    settings: Switches
    overrides: Overrides


@dataclass(frozen=True)
class Session:
    """A session's own fields (SPEC section 5, Session view)."""

    id: str
    agent: str
    kind: str
    head: str
    revision: int
    person: str | None
    model: str | None
    parent: str | None
    forked_from: str | None
    forked_at: str | None
    created_at: int


@dataclass(frozen=True)
class SessionView:
    """A session and its memory, as `GET /v1/sessions/:id` answers."""

    session: Session
    memory: Memory
    org: OrgSettings = field(default_factory=OrgSettings)

    @classmethod
    def from_record(
        cls, row: Mapping[str, Any], fields: tuple[str, ...] = ITEM_FIELDS
    ) -> SessionView:
        """A view from session_views' row (its items read with `fields`: see `Item.from_row`)."""
        s = row["session"]
        org = OrgSettings.from_record(row["org"])
        overrides = Overrides(use=s.get("useOverride"), generate=s.get("generateOverride"))
        entries = newest_first(Entry.from_row(e, fields) for e in row["entries"])
        memory = Memory(
            entries={entry.key: entry for entry in entries},
            processed=tuple(row["processed"]),
            settings=resolve_switches(org, overrides),
            overrides=overrides,
        )
        session = Session(
            id=s["id"],
            agent=s["agent"],
            kind=s["kind"],
            head=s["head"],
            revision=s["revision"],
            person=s.get("person"),
            model=s.get("model"),
            parent=s.get("parent"),
            forked_from=s.get("forkedFrom"),
            forked_at=s.get("forkedAt"),
            created_at=s["createdAt"],
        )
        return cls(session=session, memory=memory, org=org)

    def configured(self, row: Mapping[str, Any]) -> SessionView:
        """This view after a Configure made at its revision, from configure_session's row (the
        new revision and overrides, the org's settings now). A view at a revision stays what it
        is: every change to what it shows moves the revision, but for the org's settings, which
        the row brings."""
        overrides = Overrides(use=row["useOverride"], generate=row["generateOverride"])
        view = replace(self, session=replace(self.session, revision=row["configured"]),
                       memory=replace(self.memory, overrides=overrides))
        return view.at_org(row["orgSettings"])

    def at_org(self, record: Mapping[str, Any]) -> SessionView:
        """This view with the org's settings of `record` (an org's row), which change without
        moving a session's revision, and the switches they and its overrides resolve to."""
        org = OrgSettings.from_record(record)
        settings = resolve_switches(org, self.memory.overrides)
        return replace(self, memory=replace(self.memory, settings=settings), org=org)


@dataclass(frozen=True)
class Agent:
    """A configured assistant of an org."""

    id: str
    name: str
    shared: bool
    model: str | None
    created_at: int

    @classmethod
    def from_record(cls, row: Mapping[str, Any]) -> Agent:
        return cls(
            id=row["id"],
            name=row["name"],
            shared=bool(row.get("shared")),
            model=row.get("model"),
            created_at=row["createdAt"],
        )


@dataclass(frozen=True)
class Change:
    """One recorded memory change: what it changed, before and after, what made it, its sources."""

    id: str
    op: str
    maker: str
    key: str
    content: str | None
    kind: str | None
    status: str | None
    at: int
    before_content: str | None
    before_kind: str | None
    before_status: str | None
    revision: int | None
    head: str | None
    session: str | None
    made_by: str | None
    run: str | None
    model: str | None
    cites: tuple[Item, ...]

    @classmethod
    def from_record(cls, row: Mapping[str, Any]) -> Change:
        return cls(
            id=row["id"],
            op=row["op"],
            maker=row["maker"],
            key=row["key"],
            content=row.get("content"),
            kind=row.get("kind"),
            status=row.get("status"),
            at=row["at"],
            before_content=row.get("beforeContent"),
            before_kind=row.get("beforeKind"),
            before_status=row.get("beforeStatus"),
            revision=row.get("revision"),
            head=row.get("head"),
            session=row.get("session"),
            made_by=row.get("madeBy"),
            run=row.get("run"),
            model=row.get("model"),
            cites=tuple(Item.from_record(item) for item in row.get("cites") or ()),
        )


def turn_record(row: Sequence[Any]) -> dict[str, Any]:
    """A turn as session_views answers it (a list, in `TURN_ROW`'s order) as find_turns
    answers it (a map)."""
    return dict(zip(TURN_ROW, row, strict=True))


def turn_json(turn: Mapping[str, Any]) -> dict[str, Any]:
    """A turn's record (find_turns' projection) as the API answers it."""
    return {
        "turn": {
            "id": turn["id"],
            "status": turn["status"],
            "model": turn.get("model"),
            "items": turn.get("items", []),
            "shown": turn.get("shown") or [],
            "shownAgent": turn.get("shownAgent") or [],
            "at": turn["at"],
            "completedAt": turn.get("completedAt"),
        },
        "session": {"id": turn["session"], "head": turn["head"], "revision": turn["revision"]},
    }
