"""The closed sets of the domain, declared once. Each member is its word as stored and answered
(a `StrEnum` member is that `str`). GraphQL, the model prompts and REST's kinds build theirs
from these; REST's bodies spell an agent entry's visibility and the statuses a client may send
a turn with as `Literal` types of the same words (tests/api/test_openapi.py holds them equal)."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import TypeVar

E = TypeVar("E", bound=StrEnum)


def word_reader(cls: type[E]) -> Callable[[str], E]:
    """`cls`'s member for its word, as rows hold it: a dict lookup, for a large view's rows
    hold many words and an enum's own call costs several times as much. A KeyError for a word
    that names no member."""
    return {member.value: member for member in cls}.__getitem__


class Kind(StrEnum):
    """S1: what an entry holds; agent memory keeps the lasting ones (`AGENT_KINDS`, A1)."""

    FACT = "fact"
    DECISION = "decision"
    PREFERENCE = "preference"
    PROCEDURE = "procedure"
    HYPOTHESIS = "hypothesis"


AGENT_KINDS: tuple[Kind, ...] = (Kind.PROCEDURE, Kind.PREFERENCE, Kind.DECISION)  # A1


class Status(StrEnum):
    """S1: an entry in force, or retracted (kept, never sent to a model)."""

    ACTIVE = "active"
    RETRACTED = "retracted"


class ChangeOp(StrEnum):
    """What a change did to its entry (`copy`: a fork's copy of the entry it forked)."""

    REMEMBER = "remember"
    FORGET = "forget"
    COPY = "copy"


class Maker(StrEnum):
    """What made a change: a person (or the org's service), a consolidation run or learning
    job, a fork, a promotion."""

    PERSON = "person"
    CONSOLIDATION = "consolidation"
    FORK = "fork"
    PROMOTION = "promotion"


class JobStatus(StrEnum):
    """A durable job's state: a consolidation run or a learning job."""

    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    SKIPPED = "skipped"


class TurnStatus(StrEnum):
    """A turn's state."""

    RUNNING = "running"
    AWAITING_APPROVAL = "awaiting_approval"
    COMPLETED = "completed"
    FAILED = "failed"


class SessionKind(StrEnum):
    """What a session is: `review` never teaches agent memory (A2)."""

    CHAT = "chat"
    REVIEW = "review"
    SUBAGENT = "subagent"


class Visibility(StrEnum):
    """A9: an agent entry for every member, or private to the person it is about."""

    SHARED = "shared"
    PRIVATE = "private"


# The members of the sets that large reads hold many of, from the words their rows hold
kind_of, status_of = word_reader(Kind), word_reader(Status)
turn_status_of = word_reader(TurnStatus)
