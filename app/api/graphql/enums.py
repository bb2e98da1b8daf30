"""The closed sets of the schema as GraphQL enums (completion in GraphiQL, checked by every
client): each value is the word the REST views use, named in capitals."""

from __future__ import annotations

from enum import Enum
from typing import TypeVar

import strawberry

E = TypeVar("E", bound=Enum)


@strawberry.enum(description="S1: what an entry holds (agent memory keeps the last three, A1).")
class Kind(Enum):
    FACT = "fact"
    DECISION = "decision"
    PREFERENCE = "preference"
    PROCEDURE = "procedure"
    HYPOTHESIS = "hypothesis"


@strawberry.enum(description="S1: an entry in force, or retracted (kept, never sent to a model).")
class EntryStatus(Enum):
    ACTIVE = "active"
    RETRACTED = "retracted"


@strawberry.enum(description="What a change did to its entry.")
class ChangeOp(Enum):
    REMEMBER = "remember"
    FORGET = "forget"
    COPY = "copy"


@strawberry.enum(description="What made a change.")
class Maker(Enum):
    PERSON = "person"
    CONSOLIDATION = "consolidation"
    FORK = "fork"
    PROMOTION = "promotion"


@strawberry.enum(description="A durable job's state: a consolidation run or a learning job.")
class JobStatus(Enum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    SKIPPED = "skipped"


@strawberry.enum(description="A turn's state.")
class TurnStatus(Enum):
    RUNNING = "running"
    AWAITING_APPROVAL = "awaiting_approval"
    COMPLETED = "completed"
    FAILED = "failed"


@strawberry.enum(description="What a session is: `review` never teaches agent memory (A2).")
class SessionKind(Enum):
    CHAT = "chat"
    REVIEW = "review"
    SUBAGENT = "subagent"


@strawberry.enum(description="A9: an agent entry for every member, or private to `about`.")
class Visibility(Enum):
    SHARED = "shared"
    PRIVATE = "private"


def enum(cls: type[E], value: str) -> E:
    return cls(value)


def maybe(cls: type[E], value: str | None) -> E | None:
    return None if value is None else cls(value)
