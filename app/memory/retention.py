"""Retention: items older than `OPENBOT_MEMORY_ITEM_RETENTION_DAYS` have their content erased
by a background job, in batches of one transaction each (each under the locks of the sessions
it touches); the entries they support and their provenance stay. Its progress is in
`/metrics` (`openbot_memory_retention_*`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from app.memory.changes.checks import ERASED_WITHHELD
from app.memory.ids import DAY_MS, now_ms
from app.store.database import Database
from app.store.erasures import ErasureRepository

RETENTION_BATCH = 500

log = logging.getLogger("openbot_memory.retention")


@dataclass
class Retention:
    """The retention job of one process; off when `days` is None."""

    db: Database
    days: float | None
    poll_seconds: float
    clock: Callable[[], int] = now_ms
    batch: int = RETENTION_BATCH
    _task: asyncio.Task[None] | None = field(default=None, repr=False)

    async def start(self) -> None:
        if self.days is not None:
            self._task = asyncio.create_task(self._loop())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _loop(self) -> None:
        while True:
            try:
                await self.run_once()
            except Exception:  # the next pass tries again
                log.exception("a retention pass failed")
            await asyncio.sleep(self.poll_seconds)

    async def run_once(self) -> int:
        """One pass: erase the content of every item older than the retention period, batch by
        batch; how many items it erased."""
        if self.days is None:
            return 0
        cutoff = self.clock() - int(self.days * DAY_MS)
        metrics = self.db.telemetry.metrics
        total = 0
        while True:
            found, erased = await self.db.write(
                lambda tx: ErasureRepository(tx).erase_old_items(
                    cutoff, self.batch, ERASED_WITHHELD)
            )
            total += erased
            metrics.retention_erased.inc(erased)
            if found < self.batch:
                break
        metrics.retention_passes.inc()
        metrics.retention_cutoff.set(cutoff)
        return total
