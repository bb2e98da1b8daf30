"""In-process workers for durable jobs (consolidation runs, learning jobs).

A job is a node written in the transaction that asks for it. Workers claim one at a time with a
lease they keep renewing while they work; a job whose lease ran out (its process died) goes
back to the queue. A job writes what it found in one transaction at its end, so running it again
after a crash reads the same input and applies it once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from app.errors import Unavailable
from app.memory.ids import now_ms
from app.store.database import Database, Tx

log = logging.getLogger("openbot_memory.workers")


async def record_outcome(db: Database, kind: str, job: str, seconds: float) -> None:
    """Count a job that ended in this process: its duration and outcome by model, and the
    reasons of the changes it dropped, as the graph recorded them."""
    row = await db.read(lambda tx: tx.row("job_outcome", id=job))
    if row is None or row["status"] in ("queued", "running"):
        return  # gone, or handed back to the queue: it ends (and is counted) later
    db.telemetry.metrics.job_ended(
        kind, str(row["model"] or "none"), str(row["status"]), seconds, row["dropped"]
    )


@dataclass(frozen=True)
class Statements:
    """The statements of one kind of durable job: `waiting` reads whether any job is queued or
    ran out of its lease (so an idle worker writes nothing), `next` finds a candidate (its `id`,
    and the `claimKey` no two workers may run at once: a session, an agent) and locks it, `claim`
    checks again and takes it with a lease, `extend` renews a lease, `requeue` puts back the
    jobs whose lease ran out."""

    waiting: str
    next: str
    claim: str
    extend: str
    requeue: str


@dataclass
class Workers:
    """`count` loops that claim a job and run it (`run`) under a lease they keep renewing;
    jobs whose lease ran out go back to the queue, looked for at most twice a lease period.
    Each job runs in a span of its own, and how it ended is counted."""

    name: str
    db: Database
    statements: Statements
    run: Callable[[str], Awaitable[None]]
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
            job, group = claimed
            self._busy.add(group)
            self._idle.discard(n)
            try:
                await self._run_leased(job)
            finally:
                self._busy.discard(group)
                self._idle.add(n)
                async with self._done:
                    self._done.notify_all()

    async def _requeue_expired(self) -> None:
        if time.monotonic() < self._next_requeue:
            return
        self._next_requeue = time.monotonic() + self.lease_seconds / 2
        requeued = await self._requeue()
        if requeued:
            log.info("requeued %s %s jobs whose worker stopped renewing them", requeued, self.name)

    async def _keep_lease(self, job: str) -> None:
        while True:
            await asyncio.sleep(self.lease_seconds / 3)
            with contextlib.suppress(Exception):
                await self._extend(job)

    async def _run_leased(self, job: str) -> None:
        lease = asyncio.create_task(self._keep_lease(job))
        started = time.perf_counter()
        try:
            with self.db.telemetry.tracer.start_as_current_span(
                f"{self.name} job", attributes={"job": job}
            ):
                await self.run(job)
        finally:
            lease.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await lease
        try:
            await record_outcome(self.db, self.name, job, time.perf_counter() - started)
        except Exception:
            log.warning("could not read how %s job %s ended", self.name, job)

    @property
    def _lease_ms(self) -> int:
        return int(self.lease_seconds * 1000)

    async def _waiting(self) -> tuple[bool, bool]:
        row = await self.db.read(lambda tx: tx.row(self.statements.waiting, now=now_ms()))
        return (bool(row["queued"]), bool(row["expired"])) if row else (False, False)

    async def _requeue(self) -> int:
        row = await self.db.write(lambda tx: tx.row(self.statements.requeue, now=now_ms()))
        return int(row["requeued"]) if row else 0

    async def _claim(self, busy: frozenset[str]) -> tuple[str, str] | None:
        async def work(tx: Tx) -> tuple[str, str] | None:
            candidate = await tx.row(self.statements.next, busy=sorted(busy))
            if candidate is None:
                return None
            claimed = await tx.row(
                self.statements.claim, job=candidate["id"], now=now_ms(), lease=self._lease_ms
            )
            return (candidate["id"], candidate["claimKey"]) if claimed else None

        return await self.db.write(work)

    async def _extend(self, job: str) -> None:
        await self.db.write(
            lambda tx: tx.row(self.statements.extend, job=job, until=now_ms() + self._lease_ms)
        )
