"""What REST answers of the durable jobs: consolidation runs and learning jobs."""

from __future__ import annotations

from typing import Annotated

from typing_extensions import TypedDict

from app.api.responses.words import words
from app.domain import jobs
from app.domain.enums import JobStatus


class Dropped(TypedDict):
    """A proposed change a check refused, why, and the change as the model sent it (JSON)."""

    op: str | None
    key: str | None
    reason: str | None
    proposal: str | None


class Run(TypedDict):
    """A consolidation run: its state, what it read, the changes it kept and dropped."""

    id: str
    status: Annotated[str, words(JobStatus)]
    model: str | None
    trigger: str | None
    error: str | None
    queuedAt: int | None
    startedAt: int | None
    finishedAt: int | None
    attempts: int | None
    head: str | None
    session: str
    turn: str | None
    read: list[str]
    tried: list[str]
    kept: list[str]
    dropped: list[Dropped]


def dropped_json(dropped: jobs.Dropped) -> Dropped:
    return {"op": dropped.op, "key": dropped.key, "reason": dropped.reason,
            "proposal": dropped.proposal}


def run_json(run: jobs.Run) -> Run:
    return {
        "id": run.id,
        "status": run.status,
        "model": run.model,
        "trigger": run.trigger,
        "error": run.error,
        "queuedAt": run.queued_at,
        "startedAt": run.started_at,
        "finishedAt": run.finished_at,
        "attempts": run.attempts,
        "head": run.head,
        "session": run.session,
        "turn": run.turn,
        "read": list(run.read),
        "tried": list(run.tried),
        "kept": list(run.kept),
        "dropped": [dropped_json(d) for d in run.dropped],
    }


class Runs(TypedDict):
    runs: list[Run]


class LearningDropped(Dropped):
    session: str | None


class LearningJob(TypedDict):
    """A learning job of an agent: its state, what it read, the changes it kept and dropped."""

    id: str
    status: Annotated[str, words(JobStatus)]
    model: str | None
    error: str | None
    queuedAt: int | None
    startedAt: int | None
    finishedAt: int | None
    attempts: int | None
    agent: str | None
    read: list[str]
    tried: list[str]
    kept: list[str]
    dropped: list[LearningDropped]
    sessions: list[str]


def learning_job_json(job: jobs.LearningJob) -> LearningJob:
    return {
        "id": job.id,
        "status": job.status,
        "model": job.model,
        "error": job.error,
        "queuedAt": job.queued_at,
        "startedAt": job.started_at,
        "finishedAt": job.finished_at,
        "attempts": job.attempts,
        "agent": job.agent,
        "read": list(job.read),
        "tried": list(job.tried),
        "kept": list(job.kept),
        "dropped": [{**dropped_json(d), "session": d.session} for d in job.dropped],
        "sessions": list(job.sessions),
    }


class LearningJobs(TypedDict):
    jobs: list[LearningJob]
