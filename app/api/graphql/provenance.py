"""Provenance as first-class fields, one statement each per request: an entry's story, what an
item supports, what a turn was shown."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import strawberry

from app.api.graphql.context import GraphInfo
from app.api.graphql.enums import ChangeOp, EntryStatus, Kind, Maker, Visibility, enum, maybe
from app.api.graphql.scalars import EpochMillis
from app.domain import provenance

if TYPE_CHECKING:
    from app.api.graphql.sessions import Change
    from app.api.graphql.timeline import Item


@strawberry.type
class CitedItem:
    """An item a change cites, the turn it came in, and that turn's session."""

    turn_id: str | None
    session_id: str | None
    record: strawberry.Private[provenance.Cited]

    @strawberry.field
    def item(self) -> Annotated[Item, strawberry.lazy("app.api.graphql.timeline")]:
        from app.api.graphql.timeline import Item

        return Item.from_domain(self.record.item)


@strawberry.type
class StoryStep:
    """One change of an entry's story, newest first, and what made it."""

    maker: Maker
    person: str | None = strawberry.field(description="the person who made it, if one did")
    run_id: str | None = strawberry.field(description="the consolidation run that made it")
    run_model: str | None
    run_turn_id: str | None = strawberry.field(description="the turn whose run made it")
    copied: bool = strawberry.field(description="a fork's copy of the change it REPLACES")
    before: str | None
    content: str | None
    cites: list[CitedItem]
    step: strawberry.Private[provenance.StoryStep]

    @classmethod
    def from_domain(cls, step: provenance.StoryStep) -> StoryStep:
        return cls(
            maker=enum(Maker, step.change.maker),
            person=step.person,
            run_id=step.run,
            run_model=step.run_model,
            run_turn_id=step.run_turn,
            copied=step.change.op == "copy",
            before=step.change.before_content,
            content=step.change.content,
            cites=[CitedItem(turn_id=c.turn, session_id=c.session, record=c) for c in step.cites],
            step=step,
        )

    @strawberry.field(description="The change itself: op, key, kind, status, when, where.")
    def change(self) -> Annotated[Change, strawberry.lazy("app.api.graphql.sessions")]:
        from app.api.graphql.sessions import Change

        return Change.from_domain(self.step.change)


@strawberry.type
class CitingEntry:
    """A session or agent entry change that cites an item, or that a turn was shown."""

    key: str
    change_id: str
    op: ChangeOp | None = strawberry.field(description="what the change did (entries a turn "
                                           "was shown have none)")
    content: str | None
    kind: Kind | None
    status: EntryStatus | None
    at: EpochMillis
    session_id: str | None
    agent_id: str | None
    version: int | None
    about: str | None
    visibility: Visibility | None

    @classmethod
    def from_domain(cls, row: provenance.Citing) -> CitingEntry:
        return cls(
            key=row.key, change_id=row.change, op=maybe(ChangeOp, row.op), content=row.content,
            kind=maybe(Kind, row.kind), status=maybe(EntryStatus, row.status),
            at=EpochMillis(row.at), session_id=row.session, agent_id=row.agent,
            version=row.version, about=row.about, visibility=maybe(Visibility, row.visibility),
        )


@strawberry.type
class Entries:
    """Session entries and agent entries, newest first."""

    session: list[CitingEntry]
    agent: list[CitingEntry]

    @classmethod
    def from_domain(cls, pair: provenance.Pair) -> Entries:
        return cls(
            session=[CitingEntry.from_domain(r) for r in pair[0]],
            agent=[CitingEntry.from_domain(r) for r in pair[1]],
        )


async def story_of(info: GraphInfo, change_id: str) -> list[StoryStep]:
    return [StoryStep.from_domain(s) for s in await info.context.stories.load(change_id)]


async def supports_of(info: GraphInfo, uid: str) -> Entries:
    return Entries.from_domain(await info.context.supports.load(uid))


async def shown_to(info: GraphInfo, turn_id: str) -> Entries:
    return Entries.from_domain(await info.context.shown.load(turn_id))
