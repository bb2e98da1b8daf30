"""In-process workers for durable jobs (consolidation runs, learning jobs).

A job is a node written in the transaction that asks for it. Workers claim one at a time with a
lease they keep renewing while they work; a job whose lease ran out (its process died) goes
back to the queue. A job writes what it found in one transaction at its end, so running it again
after a crash reads the same input and applies it once. Each claim is an attempt, counted on
the job, and renewing, applying or ending a job names its attempt: a worker that could not renew
its lease and lost the job to another renews, applies and ends nothing of the other's claim. A
job whose lease ran out `MOST_LAPSES` times ends failed rather than queued again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from app.config import Settings
from app.domain.enums import JobStatus
from app.domain.jobs import MOST_LAPSES, PENDING, Claim, JobKind, Spent, spent_error
from app.errors import Unavailable
from app.memory.changes.credentials import prescan
from app.memory.ids import now_ms
from app.memory.jobs.prompts import failure_message, parse_answer
from app.models.base import ModelError, ModelRequest
from app.models.registry import Models, error_class
from app.store.database import Database
from app.store.jobs import JobRepository

log = logging.getLogger("openbot_memory.workers")
RELEASE_SECONDS = 5.0  # how long a stopping process tries to end the leases it holds


class Job(Protocol):
    """One kind of durable job, as the runner drives it."""

    kind: JobKind
    noun: str  # how the log names one job of the kind ("run", "learning job")
    log: logging.Logger

    async def work(self, job: str, attempt: int) -> None:
        """Run one claimed job (its claim `attempt`, which ends it) to its end."""

    async def fail(self, job: str, attempt: int, error: str) -> bool:
        """End the job failed with `error`, as its claim `attempt`; whether this ended it (a
        claim another worker took since, or a job another process ended first, is not)."""

    def ended(self) -> None:
        """Called after every job of the kind, however it ended."""


@dataclass(frozen=True, slots=True)
class Failed:
    """A model call that failed (S11): what the job records."""

    message: str


async def ask(
    job: Job, job_id: str, models: Models, settings: Settings, model_name: str,
    request: ModelRequest,
) -> list[Any] | Failed:
    """The changes a model proposes for `request`, scanned for credentials (S10's scan, off
    the event loop and before any lock); `Failed` when the model fails, times out or answers
    what is not a list of changes."""
    budget = settings.model_timeout_seconds * (settings.model_retries + 1) + 5
    try:
        model = models.get(model_name)
        content = await asyncio.wait_for(model.complete(request), budget)
        proposed = parse_answer(content)
    except (ModelError, ValueError, TimeoutError) as exc:
        # the log names the error's class only: its message may quote what the model read,
        # which an erasure takes out of the graph but could not take out of a log
        job.log.warning("%s %s: model %s failed: %s", job.noun, job_id, model_name,
                        error_class(exc))
        return Failed(failure_message(exc, budget))
    await asyncio.to_thread(prescan, proposed)
    return proposed


async def record_outcome(
    db: Database, kind: JobKind, job: str, attempt: int, seconds: float | None
) -> None:
    """Count a job that its claim `attempt` ended in this process: its duration (None: it ended
    without running here) and outcome by model, and the reasons of the changes it dropped, as
    the graph recorded them."""
    outcome = await db.read(lambda tx: JobRepository(tx).outcome(job))
    if outcome is None or outcome.status in PENDING:
        return  # gone, or handed back to the queue: it ends (and is counted) later
    if outcome.attempt != attempt:
        return  # a later claim (its lease ran out meanwhile) ended it, and its process counts it
    db.telemetry.metrics.job_ended(
        kind, str(outcome.model or "none"), str(outcome.status), seconds, list(outcome.dropped)
    )


def count_ended(db: Database, kind: JobKind, models: Sequence[str | None]) -> None:
    """Count jobs that ended without running (their work was done by another), without a
    time."""
    for model in models:
        db.telemetry.metrics.job_ended(kind, str(model or "none"), JobStatus.SUCCEEDED, None, [])


@dataclass
class Workers:
    """`count` loops that claim a job of one kind and run it under a lease they keep renewing;
    jobs whose lease ran out go back to the queue, looked for at most twice a lease period.
    Each job runs in a span of its own; whatever goes wrong, it ends recorded (as failed),
    never left running; and how it ended is counted."""

    job: Job
    db: Database
    count: int
    poll_seconds: float
    lease_seconds: float
    paused: bool = False  # a paused process claims nothing new (to drain it before a stop)
    _wakes: list[asyncio.Event] = field(default_factory=list)  # one per worker
    _sure: set[int] = field(default_factory=set)  # woken workers told a job IS queued
    _idle: set[int] = field(default_factory=set)  # the workers running no job
    _done: asyncio.Condition = field(default_factory=asyncio.Condition)
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)
    _busy: set[str] = field(default_factory=set)
    _next_requeue: float = 0.0

    def wake(self) -> None:
        """A write of this process queued a job: ONE idle worker claims it at once, without
        looking first. Waking them all would have them race for the same job, each queuing on
        the same lock; a worker that ends a job looks for the next one itself."""
        self._rouse(sure=True)

    def nudge(self) -> None:
        """A job may be due (a write may have queued one): one idle worker looks, and claims
        only what it finds, so no write transaction is opened for nothing."""
        self._rouse(sure=False)

    def _rouse(self, sure: bool) -> None:
        idle = sorted(self._idle)
        for n in idle:
            if not self._wakes[n].is_set():
                self._wakes[n].set()
                if sure:
                    self._sure.add(n)
                return
        if sure and idle:  # every idle worker is woken already: one of them claims for sure
            self._sure.add(idle[0])

    async def start(self) -> None:
        self._wakes = [asyncio.Event() for _ in range(self.count)]
        self._idle = set(range(self.count))
        self._tasks = [asyncio.create_task(self._work(n)) for n in range(self.count)]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []

    async def finished(self, seconds: float) -> None:
        """Wait until some job of this process ends, or `seconds` have passed."""
        async with self._done:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._done.wait(), seconds)

    async def _work(self, n: int) -> None:
        wake = self._wakes[n]
        while True:
            sure = n in self._sure  # a job was queued here: claim it without looking first
            self._sure.discard(n)
            wake.clear()  # before claiming, so a wake during the claim is not lost
            try:
                claimed = None
                if not self.paused:
                    queued, expired = (True, False) if sure else await self._waiting()
                    if expired:
                        await self._requeue_expired()
                    if queued or expired:
                        claimed = await self._claim(frozenset(self._busy))
            except Unavailable:
                log.warning("%s worker %s: the database does not answer", self.name, n)
                claimed = None
            except Exception:
                log.exception("%s worker %s could not claim a job", self.name, n)
                claimed = None
            if claimed is None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), self.poll_seconds)
                continue
            self._busy.add(claimed.key)
            self._idle.discard(n)
            try:
                await self._run_leased(claimed)
            finally:
                self._busy.discard(claimed.key)
                self._idle.add(n)
                async with self._done:
                    self._done.notify_all()

    async def _requeue_expired(self) -> None:
        if time.monotonic() < self._next_requeue:
            return
        self._next_requeue = time.monotonic() + self.lease_seconds / 2
        requeued, spent = await self._requeue()
        if requeued:
            log.info("requeued %s %s jobs whose worker stopped renewing them", requeued, self.name)
        for lapsed in spent:
            # another process's look may have found it too: the one whose write ends it counts it
            if not await self.job.fail(lapsed.job, lapsed.attempt, spent_error(self.job.noun)):
                continue
            log.error("%s %s: its lease ran out %s times; it ends failed", self.job.noun,
                      lapsed.job, MOST_LAPSES)
            self.job.ended()
            await record_outcome(self.db, self.name, lapsed.job, lapsed.attempt, None)

    async def _keep_lease(self, claim: Claim) -> None:
        while True:
            await asyncio.sleep(self.lease_seconds / 3)
            with contextlib.suppress(Exception):
                await self._extend(claim)

    @property
    def name(self) -> JobKind:
        return self.job.kind

    async def execute(self, claim: Claim) -> None:
        """Run one claimed job to its end; whatever goes wrong, it ends recorded as failed."""
        job = claim.job
        try:
            await self.job.work(job, claim.attempt)
        except Exception as exc:
            self.job.log.exception("%s %s failed unexpectedly", self.job.noun, job)
            with contextlib.suppress(Exception):
                await self.job.fail(job, claim.attempt,
                                    f"internal error ({exc.__class__.__name__})")
        finally:
            self.job.ended()

    async def _run_leased(self, claim: Claim) -> None:
        job = claim.job
        lease = asyncio.create_task(self._keep_lease(claim))
        started = time.perf_counter()
        try:
            with self.db.telemetry.tracer.start_as_current_span(
                f"{self.name} job", attributes={"job": job}
            ):
                await self.execute(claim)
        except asyncio.CancelledError:
            # The process stops: its claim's lease ends now (the renewing stopped first, so
            # none renews it after), and the next look for lapsed leases, in any process,
            # queues the job again rather than one after the lease ran out. A database that
            # does not answer holds the stop up for RELEASE_SECONDS at most.
            lease.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await lease
            with contextlib.suppress(Exception):
                async with asyncio.timeout(RELEASE_SECONDS):
                    await self.db.write(
                        lambda tx: JobRepository(tx).extend(self.name, job, claim.attempt, 0)
                    )
            raise
        finally:
            lease.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await lease
        try:
            await record_outcome(
                self.db, self.name, job, claim.attempt, time.perf_counter() - started
            )
        except Exception:
            log.warning("could not read how %s job %s ended", self.name, job)

    @property
    def _lease_ms(self) -> int:
        return int(self.lease_seconds * 1000)

    async def _waiting(self) -> tuple[bool, bool]:
        return await self.db.read(lambda tx: JobRepository(tx).waiting(self.name, now_ms()))

    async def _requeue(self) -> tuple[int, list[Spent]]:
        return await self.db.write(lambda tx: JobRepository(tx).requeue(self.name, now_ms()))

    async def _claim(self, busy: frozenset[str]) -> Claim | None:
        return await self.db.write(
            lambda tx: JobRepository(tx).claim(self.name, sorted(busy), now_ms(), self._lease_ms)
        )

    async def _extend(self, claim: Claim) -> None:
        await self.db.write(
            lambda tx: JobRepository(tx).extend(
                self.name, claim.job, claim.attempt, now_ms() + self._lease_ms
            )
        )


async def pending_jobs(db: Database) -> dict[tuple[str, str], int]:
    """How many jobs of each kind are queued and running, by (kind, status)."""
    return await db.read(lambda tx: JobRepository(tx).pending())
