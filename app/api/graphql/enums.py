"""The closed sets of the schema as GraphQL enums (completion in GraphiQL, checked by every
client): the domain's own (`app/domain/enums.py`), each value the word the REST views use,
named in capitals."""

from __future__ import annotations

from enum import Enum
from functools import cache
from typing import Any, TypeVar

import strawberry

from app.domain.enums import ChangeOp, JobStatus, Kind, Maker, SessionKind, TurnStatus, Visibility
from app.domain.enums import Status as EntryStatus

__all__ = ["ChangeOp", "EntryStatus", "JobStatus", "Kind", "Maker", "SessionKind", "TurnStatus",
           "Visibility", "enum", "maybe"]

E = TypeVar("E", bound=Enum)

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


@cache
def _members(cls: type[Enum]) -> dict[Any, Any]:
    """The members of `cls` by value: a dict lookup where `cls(value)` goes through Enum's
    metaclass call, which costs more than the rest of a view's node."""
    return {member.value: member for member in cls}


def enum(cls: type[E], value: str) -> E:
    member: E | None = _members(cls).get(value)
    return cls(value) if member is None else member  # cls(value) says what is wrong


def maybe(cls: type[E], value: str | None) -> E | None:
    return None if value is None else enum(cls, value)
