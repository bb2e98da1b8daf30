"""Entries that cite an item or that a turn was shown."""

from __future__ import annotations

import strawberry

from app.api.graphql.enums import ChangeOp, EntryStatus, Kind, Visibility
from app.api.graphql.scalars import EpochMillis
from app.domain import provenance


@strawberry.type
class CitingEntry:
    """A session or agent entry change that cites an item, or that a turn was shown."""

    key: str
    listed_as: str = strawberry.field(
        description="the name the entry is listed under: its key, or key@person for a private "
        "agent entry"
    )
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
            key=row.key, listed_as=row.name, change_id=row.change, op=row.op,
            content=row.content,
            kind=row.kind, status=row.status,
            at=EpochMillis(row.at), session_id=row.session, agent_id=row.agent,
            version=row.version, about=row.about, visibility=row.visibility,
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
