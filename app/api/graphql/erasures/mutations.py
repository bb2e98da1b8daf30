"""The erasure mutation and its answer."""

from __future__ import annotations

import strawberry

from app.api.graphql.context import GraphInfo
from app.api.graphql.scalars import EpochMillis
from app.domain.erasures import Erasure as ErasureValue


@strawberry.type
class ErasureCounts:
    """What an erasure made tombstones of."""

    sessions: int
    items: int
    entries: int
    agent_entries: int
    changes: int
    jobs: int


@strawberry.type
class Erasure:
    """One erasure of a person's data: who was erased, when, and its counts; no content."""

    id: strawberry.ID
    person: str
    at: EpochMillis
    counts: ErasureCounts

    @classmethod
    def from_domain(cls, erasure: ErasureValue) -> Erasure:
        c = erasure.counts
        return cls(
            id=strawberry.ID(erasure.id), person=erasure.person, at=EpochMillis(erasure.at),
            counts=ErasureCounts(
                sessions=c.sessions, items=c.items, entries=c.entries,
                agent_entries=c.agent_entries, changes=c.changes, jobs=c.jobs,
            ),
        )


@strawberry.type
class ErasureMutation:
    @strawberry.mutation(
        description="Erase a person's data everywhere it went (service tokens only): their "
        "content becomes tombstones, their id an opaque one, their tokens are revoked."
    )
    async def erase_person(self, info: GraphInfo, person: strawberry.ID) -> Erasure:
        ctx = info.context
        return Erasure.from_domain(await ctx.service.erasures.erase_person(ctx.who, str(person)))
