"""Consolidation runs and the changes they dropped."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import strawberry

from app.api.graphql.context import GraphInfo
from app.api.graphql.enums import JobStatus, enum
from app.api.graphql.scalars import EpochMillis
from app.api.graphql.timeline import Turn
from app.domain import jobs

if TYPE_CHECKING:
    from app.api.graphql.sessions import Change


@strawberry.type
class DroppedChange:
    """A change a model proposed that broke a rule (S9, S10), and which one."""

    op: str
    key: str
    reason: str
    proposal: str


@strawberry.type
class Run:
    """One consolidation: what it read, the model, the changes it kept and dropped, its error."""

    id: str
    status: JobStatus
    model: str | None
    trigger: str
    error: str | None
    queued_at: EpochMillis
    finished_at: EpochMillis | None
    attempts: int
    read: list[str] = strawberry.field(description="The ids of the items it read.")
    tried: list[str] = strawberry.field(
        description="The ids of the items a failed run tried to read (they stay unprocessed)."
    )
    dropped: list[DroppedChange]
    kept_ids: strawberry.Private[list[str]]
    turn_id: strawberry.Private[str | None]

    @classmethod
    def maybe(cls, run: jobs.Run | None) -> Run | None:
        if run is None:
            return None
        finished = run.finished_at
        return cls(
            id=run.id,
            status=enum(JobStatus, run.status),
            model=run.model,
            trigger=run.trigger or "turn",
            error=run.error,
            queued_at=EpochMillis(run.queued_at),
            finished_at=None if finished is None else EpochMillis(finished),
            attempts=run.attempts,
            read=list(run.read),
            tried=list(run.tried),
            dropped=[DroppedChange(op=d.op, key=d.key, reason=d.reason, proposal=d.proposal)
                     for d in run.dropped],
            kept_ids=list(run.kept),
            turn_id=run.turn,
        )

    @strawberry.field(description="The changes it applied.")
    async def changes(
        self, info: GraphInfo
    ) -> list[Annotated[Change, strawberry.lazy("app.api.graphql.sessions")]]:
        from app.api.graphql.sessions import Change

        chains = await info.context.histories.load_many(self.kept_ids)
        return [Change.from_domain(chain[0]) for chain in chains if chain]

    @strawberry.field
    async def turn(
        self, info: GraphInfo
    ) -> Annotated[Turn, strawberry.lazy("app.api.graphql.timeline")] | None:
        if self.turn_id is None:
            return None
        return Turn.maybe(await info.context.turns.load(self.turn_id))
