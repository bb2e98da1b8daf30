"""A session's timeline: its items, the turns they came in, and the heads it had."""

from __future__ import annotations

from collections.abc import Awaitable, Iterable, Sequence
from typing import TYPE_CHECKING, Annotated

import strawberry
from strawberry.types.nodes import SelectedField, Selection

from app.api.graphql.connections import (
    DEFAULT_FIRST,
    Connection,
    Keyset,
    Page,
    connection,
    page_of,
)
from app.api.graphql.context import GraphInfo
from app.api.graphql.enums import TurnStatus, enum
from app.api.graphql.execution import NOT_READ, NotRead, in_place
from app.api.graphql.scalars import EpochMillis
from app.domain import sessions as values
from app.domain.sessions import Version
from app.domain.turns import Turn as RecordedTurn

if TYPE_CHECKING:
    from app.api.graphql.provenance import Entries
    from app.api.graphql.sessions import Entry, Session

ITEMS = Keyset("items", (int,))


@strawberry.type
class Turn:
    """One model step of a session, with the memory keys it was shown (S5)."""

    id: str
    status: TurnStatus
    model: str | None
    shown_keys: list[str] = strawberry.field(description="The session memory keys it was shown.")
    shown_agent: list[str] = strawberry.field(description="The agent memory keys it was shown.")
    @strawberry.field
    async def item_ids(self, info: GraphInfo) -> list[str]:
        return [item.id for item in await info.context.turn_items.load(self.id)]

    @strawberry.field
    async def items(self, info: GraphInfo) -> list[Item]:
        return [Item.from_domain(item) for item in await info.context.turn_items.load(self.id)]

    at: EpochMillis
    completed_at: EpochMillis | None
    session_id: strawberry.Private[str]

    @classmethod
    def maybe(cls, turn: RecordedTurn | None) -> Turn | None:
        if turn is None:
            return None
        return cls(
            id=turn.id,
            status=enum(TurnStatus, turn.status),
            model=turn.model,
            shown_keys=list(turn.shown),
            shown_agent=list(turn.shown_agent),
            at=EpochMillis(turn.at),
            completed_at=None if turn.completed_at is None else EpochMillis(turn.completed_at),
            session_id=turn.session,
        )

    @strawberry.field
    async def session(
        self, info: GraphInfo
    ) -> Annotated[Session, strawberry.lazy("app.api.graphql.sessions")] | None:
        from app.api.graphql.sessions import Session

        return Session.maybe(await info.context.sessions.load(self.session_id))

    @strawberry.field(
        description="The session and agent entries the turn was given, as they then stood "
        "(S5, A8; one statement per request)."
    )
    async def shown(
        self, info: GraphInfo
    ) -> Annotated[Entries, strawberry.lazy("app.api.graphql.provenance")]:
        from app.api.graphql.provenance import shown_to

        return await shown_to(info, self.id)


@strawberry.type
class Item:
    """One entry of a session's timeline."""

    id: str
    type: str
    role: str | None
    content: str | None
    app: str | None
    author: str | None
    at: EpochMillis
    seq: int
    uid: strawberry.Private[str]
    turn_id: strawberry.Private[str | None] = None
    turn_known: strawberry.Private[bool] = False  # else `turn` looks the turn up by the uid
    # The turn itself, when the list holding the item read it ahead (`read_turns_ahead`).
    turn_read: strawberry.Private[bool] = False
    read_turn: strawberry.Private[Turn | None] = None

    @classmethod
    def from_domain(cls, item: values.Item) -> Item:
        return cls(
            uid=item.uid,
            id=item.id,
            type=item.type,
            role=item.role,
            content=item.content,
            app=item.app,
            author=item.author,
            at=EpochMillis(item.at),
            seq=item.seq,
            turn_id=item.turn,
            turn_known=item.turn_known,
        )

    @strawberry.field(
        description="Every session and agent entry change that cites this item, across forks, "
        "newest first (one statement per request)."
    )
    async def supports(
        self, info: GraphInfo
    ) -> Annotated[Entries, strawberry.lazy("app.api.graphql.provenance")]:
        from app.api.graphql.provenance import supports_of

        return await supports_of(info, self.uid)

    @strawberry.field(
        description="The turn the item came in (none for a memory edit).",
        graphql_type=Turn | None,
    )
    @in_place(lambda item: item.turn_ahead())
    def turn(self, info: GraphInfo) -> Turn | Awaitable[Turn | None] | None:
        # Answered at once when read ahead: a list of items then completes in place (execution).
        ahead = self.turn_ahead()
        return self._load_turn(info) if isinstance(ahead, NotRead) else ahead

    def turn_ahead(self) -> Turn | NotRead | None:
        """The turn `read_turns_ahead` handed over, or NOT_READ when it handed none."""
        return self.read_turn if self.turn_read else NOT_READ

    async def _load_turn(self, info: GraphInfo) -> Turn | None:
        turn_id = self.turn_id if self.turn_known else await info.context.turn_ids.load(self.uid)
        if turn_id is None:
            return None
        return Turn.maybe(await info.context.turns.load(turn_id))


@strawberry.type(name="Version")
class SessionVersion:
    """A head the session had: when, what made it, and (on request) everything as it was."""

    id: str
    cause: str = strawberry.field(
        description="start, turn, remember, forget, consolidation, fork or revert"
    )
    at: EpochMillis
    parent: str | None
    reverted_from: str | None
    added: list[str] = strawberry.field(description="The ids of the items it added.")
    current: bool
    depth: strawberry.Private[int]

    @classmethod
    def from_domain(cls, version: Version) -> SessionVersion:
        return cls(
            id=version.id,
            cause=version.cause,
            at=EpochMillis(version.at),
            parent=version.parent,
            reverted_from=version.reverted_from,
            added=list(version.added),
            current=version.current,
            depth=version.depth,
        )

    @strawberry.field(description="The memory entries as they were at this version, by key.")
    async def entries(
        self, info: GraphInfo, first: int = DEFAULT_FIRST, after: str | None = None
    ) -> Connection[Annotated[Entry, strawberry.lazy("app.api.graphql.sessions")]]:
        from app.api.graphql.sessions import Entry, entries_connection

        found = await info.context.memories.load(self.id)
        by_key = {e.key: Entry.from_domain(e) for e in found}
        return await entries_connection(info, by_key, first, after)

    @strawberry.field(description="The timeline as it was at this version, oldest first.")
    async def items(
        self, info: GraphInfo, first: int = DEFAULT_FIRST, after: str | None = None
    ) -> Connection[Item]:
        return await items_of(info, self.id, page_of(ITEMS, first, after))


def selected(selections: Iterable[Selection], path: Sequence[str]) -> set[str]:
    """The names of the fields a selection asks for within the field at `path` (by field name,
    through fragments; wherever the path is asked more than once, all of them)."""
    names: set[str] = set()
    for selection in selections:
        if not isinstance(selection, SelectedField):
            names |= selected(selection.selections, path)
        elif not path:
            names.add(selection.name)
        elif selection.name == path[0]:
            names |= selected(selection.selections, path[1:])
    return names


def item_fields(names: set[str]) -> tuple[str, ...]:
    """The item properties a selection of Item's fields (`names`) reads: its uid and id (what
    `turn` and `supports` look up by) and each property it asks (session_views' `$itemFields`)."""
    return tuple(f for f in values.ITEM_FIELDS if f in names or f in ("uid", "id"))


def anywhere(selections: Iterable[Selection], names: set[str]) -> bool:
    """Whether a selection asks, at any depth, for a field named one of `names`."""
    return any(
        (isinstance(selection, SelectedField) and selection.name in names)
        or anywhere(selection.selections, names)
        for selection in selections
    )


def asks(selections: Iterable[Selection], path: Sequence[str]) -> bool:
    """Whether a selection asks for the field at `path` (by field name, through fragments)."""
    if not path:
        return True
    for selection in selections:
        if isinstance(selection, SelectedField):
            if selection.name == path[0] and asks(selection.selections, path[1:]):
                return True
        elif asks(selection.selections, path):
            return True
    return False


async def read_turns_ahead(info: GraphInfo, items: Iterable[Item]) -> None:
    """Read the turns of `items` in one batch and hand each item its own, so that a list of
    items answers `turn` without one await per item. Items whose turn is not known yet are
    left to look it up themselves."""
    known = [item for item in items if item.turn_known and not item.turn_read]
    ids = list({item.turn_id for item in known if item.turn_id is not None})
    ctx = info.context
    # Turns this request read already come from the loader's cache; the others are read in
    # one statement, not gathered from a loader future per item (a page of 200 entries has
    # some 400), and primed into the loader for any other field that asks the same turns.
    cached = {i: ctx.turns.cache_map.get(i) for i in ids}
    missing = [i for i, read in cached.items() if read is None]
    try:
        found = await ctx.service.turns.find(ctx.who, missing) if missing else {}
        rows = {i: found.get(i) if read is None else await read for i, read in cached.items()}
    except Exception:  # each item's own lookup then meets the error, on its nullable `turn`,
        return  # so a failed read ahead costs those fields, not the whole page of entries
    ctx.turns.prime_many({i: found.get(i) for i in missing})
    turns = {i: Turn.maybe(row) for i, row in rows.items()}
    for item in known:
        item.read_turn = None if item.turn_id is None else turns[item.turn_id]
        item.turn_read = True


async def items_of(info: GraphInfo, version: str, page: Page) -> Connection[Item]:
    """A page of the timeline as it was at `version` (a head: the timeline now), keyed by seq."""
    loader = info.context.page("items", page.after_part(), page.first)
    found = await loader.load(version)
    return connection(ITEMS, page, found, lambda i: (i.seq,), Item.from_domain)
