"""Durable jobs: consolidation runs and learning jobs, what they read, and what they decided.

A run or a job is queued, claimed by one worker under a lease, and ends `succeeded`, `failed`
or `skipped`; the changes its model proposed are kept (and applied) or dropped with a reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from app.domain.enums import ChangeOp, JobStatus, Kind, Status
from app.domain.items import Item

JobKind = Literal["consolidation", "learning"]
PENDING = (JobStatus.QUEUED, JobStatus.RUNNING)  # the statuses of a job that has not ended

ItemT = TypeVar("ItemT")


@dataclass(frozen=True, slots=True)
class Kept:
    """A proposed change to a session's memory that passed every check, ready to apply."""

    op: ChangeOp
    key: str
    content: str
    kind: Kind
    status: Status
    sources: tuple[str, ...]
    replaces: str | None  # the change id of the entry's current state, if any


@dataclass(frozen=True, slots=True)
class Dropped:
    """A proposed change that broke a rule, and which one."""

    op: str
    key: str
    reason: str
    proposal: str  # the change as the model sent it, as JSON
    session: str | None = None  # the session a learning job read it from
    about: str | None = None  # the person a learning job's change says it is about (A5)


@dataclass(frozen=True, slots=True)
class Run:
    """One consolidation run of a session: its state, what it read, kept and dropped."""

    id: str
    status: JobStatus
    model: str | None
    trigger: str | None
    error: str | None
    queued_at: int
    started_at: int | None
    finished_at: int | None
    attempts: int | None
    head: str | None
    session: str
    turn: str | None
    read: tuple[str, ...]  # the ids of the items it read
    tried: tuple[str, ...]  # the ids of the items a failed run tried to read
    kept: tuple[str, ...]  # the ids of the changes it made
    dropped: tuple[Dropped, ...]

    @property
    def ended(self) -> bool:
        return self.status not in PENDING


@dataclass(frozen=True, slots=True)
class LearningJob:
    """One learning job of an agent: its state, the sessions and items it learned from, and the
    agent changes it kept and dropped."""

    id: str
    status: JobStatus
    model: str | None
    error: str | None
    queued_at: int
    started_at: int | None
    finished_at: int | None
    attempts: int | None
    agent: str
    read: tuple[str, ...]
    tried: tuple[str, ...]
    kept: tuple[str, ...]
    dropped: tuple[Dropped, ...]
    sessions: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Claim:
    """A job a worker took: its id, the key no two workers run at once (a session, an agent),
    and which attempt at it this is: the fence of its lease, which renewing and ending it
    name, so that a worker whose lease ran out (and whose job another claimed) changes
    nothing of it."""

    job: str
    key: str
    attempt: int


@dataclass(frozen=True, slots=True)
class Spent:
    """A job whose lease lapsed `MOST_LAPSES` times, with the attempt that ends it failed."""

    job: str
    attempt: int


# How many times a job's lease may run out (its process died while it ran) before it ends
# failed rather than queued again: a job that ends its process (its input exhausts the memory,
# say) would otherwise be taken up again forever, and holds its session's later runs, and its
# agent's learning, behind it. A lease a stopping process ends is no lapse.
MOST_LAPSES = 3


def spent_error(noun: str) -> str:
    """The error a spent job records."""
    return (
        f"the {noun} was stopped {MOST_LAPSES} times by the end of the process running it, "
        "and is not run again"
    )


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a job ended, as the graph recorded it: its status, model, the claim (attempt) that
    ended it, and the reasons of the changes it dropped."""

    status: JobStatus
    model: str | None
    attempt: int
    dropped: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RunContext:
    """A run and whose it is: its session, agent and org, and what decides its `generate`
    switch now: the session's override and the org's default."""

    run: str
    model: str
    status: JobStatus
    session: str
    agent: str
    org: str
    generate_override: bool | None
    org_generate: bool


@dataclass(frozen=True, slots=True)
class SessionInput(Generic[ItemT]):
    """One session's part of a learning job: its person, its turns to learn from, and their
    items."""

    session: str
    person: str | None
    turns: tuple[str, ...]
    items: tuple[ItemT, ...]


def with_unique_ids(part: SessionInput[Item]) -> list[SessionInput[Item]]:
    """A session's part as parts in each of which no two items share an id: an id is unique on
    a branch only, so after a revert turns on two branches may hold the same ids, and the
    helper model names the items it cites by id (A3, A4). The turns come in the order they were
    recorded; a turn whose ids the part before it holds starts a part, so each part is turns of
    one branch. One part where no ids repeat."""
    groups: list[tuple[set[str], set[str]]] = []  # (turns, item ids)
    for turn in part.turns:
        ids = {item.id for item in part.items if item.turn == turn}
        if groups and not ids & groups[-1][1]:
            groups[-1][0].add(turn)
            groups[-1][1].update(ids)
        else:
            groups.append(({turn}, ids))
    if len(groups) <= 1:
        return [part]
    return [
        SessionInput(part.session, part.person, tuple(t for t in part.turns if t in turns),
                     tuple(item for item in part.items if item.turn in turns))
        for turns, _ in groups
    ]


@dataclass(frozen=True, slots=True)
class LearningInput(Generic[ItemT]):
    """What a learning job reads: whose it is, the org's helper model and members, and for each
    session with turns left to learn from, its part."""

    agent: str
    org: str
    helper_model: str | None
    agent_memory: bool | None
    members: tuple[str, ...]
    sessions: Sequence[SessionInput[ItemT]]
