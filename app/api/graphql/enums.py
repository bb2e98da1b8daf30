"""The closed sets of the schema as GraphQL enums (completion in GraphiQL, checked by every
client): the domain's own (`app/domain/enums.py`), each value the word the REST views use,
named in capitals."""

from __future__ import annotations

import strawberry

from app.domain.enums import ChangeOp, JobStatus, Kind, Maker, SessionKind, TurnStatus, Visibility
from app.domain.enums import Status as EntryStatus

__all__ = ["ChangeOp", "EntryStatus", "JobStatus", "Kind", "Maker", "SessionKind", "TurnStatus",
           "Visibility"]

strawberry.enum(
    Kind, description="S1: what an entry holds (agent memory keeps the last three, A1)."
)
strawberry.enum(
    EntryStatus, name="EntryStatus",
    description="S1: an entry in force, or retracted (kept, never sent to a model).",
)
strawberry.enum(ChangeOp, description="What a change did to its entry.")
strawberry.enum(Maker, description="What made a change.")
strawberry.enum(
    JobStatus, description="A durable job's state: a consolidation run or a learning job."
)
strawberry.enum(TurnStatus, description="A turn's state.")
strawberry.enum(
    SessionKind, description="What a session is: `review` never teaches agent memory (A2)."
)
strawberry.enum(
    Visibility, description="A9: an agent entry for every member, or private to `about`."
)

