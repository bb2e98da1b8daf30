"""Session memory's values: a session, its memory's entries, its views and state, and the
switches in force (S1-S4, S12-S15). Its timeline's items are `app.domain.items`, its history
(changes and versions) `app.domain.history`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from app.domain.enums import ChangeOp, Kind, SessionKind, Status, kind_of, status_of
from app.domain.items import ITEM_FIELDS, Item
from app.domain.made import made

KINDS: tuple[Kind, ...] = tuple(Kind)
SESSION_KINDS: tuple[SessionKind, ...] = tuple(SessionKind)


@dataclass(frozen=True)
class Switches:
    """The `use` and `generate` switches in force."""

    use: bool
    generate: bool


@dataclass(frozen=True)
class Overrides:
    """What a session set itself; None means it follows the org default."""

    use: bool | None = None
    generate: bool | None = None


@dataclass(frozen=True)
class OrgSettings:
    """An org's defaults."""

    use: bool = True
    generate: bool = True
    agent_memory: bool = True
    helper_model: str | None = None
    model: str | None = None


def resolve_switches(org: OrgSettings, overrides: Overrides) -> Switches:
    """S4: each switch follows the org default unless the session overrides it."""
    return Switches(
        use=org.use if overrides.use is None else overrides.use,
        generate=org.generate if overrides.generate is None else overrides.generate,
    )


@dataclass(frozen=True)
class Entry:
    """S1: one fact under one key."""

    key: str
    content: str
    kind: Kind
    sources: tuple[str, ...]
    updated_at: int
    status: Status
    change: str = ""  # the id of the change that made this state
    # The sources' items, or None where the view was read without them (their ids only)
    source_items: tuple[Item, ...] | None = ()

    @classmethod
    def from_row(cls, row: Sequence[Any], fields: tuple[str, ...] = ITEM_FIELDS) -> Entry:
        """An entry as session_views answers it: a list, in the order unpacked here, whose
        items are null where the view was read without them (`fields`: as `Item.from_row`)."""
        key, content, kind, status, updated_at, change, source_ids, found = row
        items = None if found is None else tuple(Item.from_row(item, fields) for item in found)
        return made(cls, {"key": key, "content": content, "kind": kind_of(kind),
                          "sources": tuple(source_ids), "updated_at": updated_at,
                          "status": status_of(status), "change": change, "source_items": items})

    def items(self) -> tuple[Item, ...]:
        """The sources' items; an error where the view was read without them (a caller's
        mistake, never the user's)."""
        if self.source_items is None:
            raise RuntimeError(f"entry {self.key!r} was read without its sources' items")
        return self.source_items


def _newest_key(entry: Entry) -> tuple[int, str]:
    return -entry.updated_at, entry.key


def newest_first(entries: Iterable[Entry]) -> list[Entry]:
    """Entries newest first, ties by key: the order of every view."""
    return sorted(entries, key=_newest_key)


class Entries(dict[str, Entry]):
    """A memory's entries by key, newest first: a dict that a weak reference can follow, so that
    what a reader builds of a view (the GraphQL nodes) lives exactly as long as the view."""

    __slots__ = ("__weakref__",)


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
    kind: SessionKind
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

    def configured(self, done: Configured) -> SessionView:
        """This view after a Configure made at its revision (`done`: the new revision and
        overrides, the org's settings now). A view at a revision stays what it is: every change
        to what it shows moves the revision, but for the org's settings, which `done` brings."""
        view = replace(self, session=replace(self.session, revision=done.revision),
                       memory=replace(self.memory, overrides=done.overrides))
        return view.at_org(done.org)

    def edited(self, done: Edited, fields: tuple[str, ...]) -> SessionView:
        """This view after a Remember or Forget made at its revision (`done`: what it wrote,
        the org's settings now), its items read with `fields` (none: the sources' ids only, as
        `Item.from_row`). The edit changes its entry and the session's head and revision; the
        rest of a view at a revision stays what it is, but for the org's settings."""
        entry = done.entry
        entry = replace(entry, source_items=None if not fields else tuple(
            item.only(fields) for item in entry.items()))
        rest = {key: e for key, e in self.memory.entries.items() if key != entry.key}
        first = next(iter(rest.values()), None)
        if first is None or _newest_key(entry) <= _newest_key(first):
            entries = Entries({entry.key: entry, **rest})  # the newest: the rest keep order
        else:
            entries = Entries((e.key, e) for e in newest_first([*rest.values(), entry]))
        view = replace(
            self, session=replace(self.session, head=done.head, revision=done.revision),
            memory=replace(self.memory, entries=entries),
        )
        return view.at_org(done.org)

    def at_org(self, org: OrgSettings) -> SessionView:
        """This view with the org's settings `org`, which change without moving a session's
        revision, and the switches they and its overrides resolve to."""
        settings = resolve_switches(org, self.memory.overrides)
        return replace(self, memory=replace(self.memory, settings=settings), org=org)


@dataclass(frozen=True, slots=True)
class SessionState:
    """A session as its lock reads it: what a command checks (S12), what a turn or a run
    decides from, and with a key that key's entry as it stands (`current`: its change, or None
    where the memory has no such key)."""

    id: str
    agent: str
    kind: SessionKind
    head: str
    depth: int
    revision: int
    items: int  # the items on the head's branch
    client_item_ids: bool  # whether a client ever chose an item id here
    person: str | None
    model: str | None
    agent_model: str | None
    agent_shared: bool
    overrides: Overrides
    org: OrgSettings
    head_shared: bool  # another version continues the head (a fork made at it)
    current: str | None = None

    @property
    def switches(self) -> Switches:
        return resolve_switches(self.org, self.overrides)


@dataclass(frozen=True, slots=True)
class Configured:
    """What a Configure leaves: the session's new revision and overrides, and its org's
    settings now."""

    revision: int
    overrides: Overrides
    org: OrgSettings


@dataclass(frozen=True, slots=True)
class Edited:
    """What a Remember or Forget wrote: the session's new head and revision, its entry's new
    state (its sources' items read with every property), and its org's settings now."""

    head: str
    revision: int
    entry: Entry
    org: OrgSettings


@dataclass(frozen=True, slots=True)
class SessionMark:
    """Where a session stands (its head and revision, and its agent's count of erasures of
    entries, which change what its turns were shown), and its org's settings now."""

    id: str
    head: str
    revision: int
    org: OrgSettings
    agent_erasures: int = 0


@dataclass(frozen=True, slots=True)
class HeadState:
    """What a session keeps of its head's memory: its entries' changes and the processed
    items with their mark (`processed_seq`)."""

    changes: tuple[str, ...]
    processed: tuple[str, ...]
    processed_seq: int


@dataclass(frozen=True, slots=True)
class NewSession:
    """A session about to be created."""

    id: str
    agent: str
    kind: SessionKind
    parent: str | None
    person: str
    model: str | None
    head: str
    created_at: int


@dataclass(frozen=True, slots=True)
class MemoryEdit:
    """A person's (or the org service's) Remember or Forget, as it is recorded: the change,
    and the item that records it on the timeline (`item_id`: None takes the branch's next)."""

    op: ChangeOp
    key: str
    content: str | None
    kind: Kind | None
    status: Status
    person: str | None
    service: str | None
    item_uid: str
    item_content: str
    head: str
    change: str
    at: int
    item_id: str | None = None


@dataclass(frozen=True, slots=True)
class LiveMarks:
    """What says a watched session or agent moved: a session's revision and its ended runs
    (how many, and when the last one ended), an agent's memory version. Never shown."""

    revision: int = 0
    ended: int = 0
    last_ended: int = 0
    version: int = 0
