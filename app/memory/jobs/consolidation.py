"""S7-S11, S16: consolidation. A completed turn queues a durable run (in the turn's own
transaction); workers inside the service claim runs, one at a time per session, ask the model,
check its answer and apply what passes to the newest memory in one transaction.

A run writes nothing until it applies, all at once, so a crash at any point leaves it queued
or running. A running run holds a lease that its worker renews; when a process dies its lease
runs out and any worker puts the run back in the queue, to run again on the same items.
Items are marked processed in the applying transaction, under the session's lock, and a run
only ever reads items that are still unprocessed then: no item is consolidated twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from app.config import Settings
from app.domain.enums import JobStatus
from app.domain.items import Item
from app.domain.jobs import PENDING, JobKind, Run, RunContext
from app.domain.model_names import resolve_model
from app.domain.principals import Principal
from app.domain.sessions import OrgSettings, Overrides, SessionView, resolve_switches
from app.errors import NotFound, SessionConflict
from app.memory.changes.checks import session_changes
from app.memory.ids import new_head, new_id, now_ms
from app.memory.jobs.learning import queue_learning
from app.memory.jobs.prompts import (
    CONSOLIDATION_SCHEMA_NAME,
    consolidation_messages,
    memory_changes_schema,
)
from app.memory.jobs.runner import Failed, Workers, ask, count_ended
from app.models.base import ContextEntry, ContextItem, ModelRequest
from app.models.registry import Models
from app.store.database import Database, Tx, settled_list
from app.store.jobs import JobRepository
from app.store.sessions import SessionRepository

log = logging.getLogger("openbot_memory.consolidation")

REFRESH_WAIT_SECONDS = 120.0


class Owner(NamedTuple):
    """Whose run it is: its session's org and agent."""

    org: str
    agent: str


def generates(context: RunContext) -> bool:
    """S4, S11: whether the `generate` switch in force for a run's session is on."""
    overrides = Overrides(generate=context.generate_override)
    return resolve_switches(OrgSettings(generate=context.org_generate), overrides).generate


def first_chunk(items: Sequence[Item], budget_chars: int) -> list[Item]:
    """The oldest items whose text fits the prompt budget, and always at least one: a larger
    backlog is read by the runs that follow, never sent whole."""
    chunk: list[Item] = []
    used = 0
    for item in items:
        used += len(item.content or "")
        if chunk and used > budget_chars:
            break
        chunk.append(item)
    return chunk


def read_prefix(unprocessed: Sequence[Item], read_uids: set[str]) -> list[Item]:
    """What a run read and may mark processed: the unprocessed items of the current branch, oldest
    first, up to the first one it did not read. The ledger stays a prefix of the timeline even
    when a revert changed the branch while the model worked."""
    prefix: list[Item] = []
    for item in unprocessed:
        if item.uid not in read_uids:
            break
        prefix.append(item)
    return prefix


@dataclass
class Consolidation:
    """The durable queue of consolidation runs and the workers that run them (one run at a
    time per session)."""

    db: Database
    models: Models
    settings: Settings
    workers: int = 2
    # Called when a run ends (learning may be due, A2): wakes the learning workers.
    on_run_end: Callable[[], None] = field(default=lambda: None)
    pool: Workers = field(init=False)
    kind: JobKind = field(default="consolidation", init=False)
    noun: str = field(default="run", init=False)
    log: logging.Logger = field(default=log, init=False)

    def __post_init__(self) -> None:
        self.pool = Workers(
            job=self,
            db=self.db,
            count=self.workers,
            poll_seconds=self.settings.worker_poll_seconds,
            lease_seconds=self.settings.run_lease_seconds,
        )

    def wake(self) -> None:
        self.pool.wake()

    async def start(self) -> None:
        await self.pool.start()

    async def stop(self) -> None:
        await self.pool.stop()

    def ended(self) -> None:
        self.on_run_end()

    async def fail(self, run_id: str, attempt: int, error: str) -> bool:
        return await self._finish(run_id, attempt, None, JobStatus.FAILED, error)

    async def work(self, run_id: str, attempt: int) -> None:
        """Run one claimed run to its end: applied, failed (S11), skipped, or nothing to read."""

        async def read(tx: Tx) -> tuple[RunContext, list[Item], SessionView | None] | None:
            jobs = JobRepository(tx)
            context = await jobs.run_context(run_id)
            if context is None:
                return None
            backlog = await jobs.unprocessed(context.session)
            if not backlog or not generates(context):
                return context, backlog, None  # the run ends here: no view needed
            view = await SessionRepository(tx).view(Principal(context.org), context.session)
            return context, backlog, view

        found = await self.db.read(read)  # the run, its session's backlog and view: one read
        if found is None:  # its session was deleted (or erased) since the run was queued
            await self._finish(run_id, attempt, None, JobStatus.SKIPPED, None)
            return
        context, backlog, seen_view = found
        model_name = context.model
        owner = Owner(context.org, context.agent)
        if not generates(context):  # S11: off since the run was queued
            await self._finish(run_id, attempt, owner, JobStatus.SKIPPED, None)
            return
        if seen_view is None:  # nothing to read: earlier runs read it all
            await self._finish(run_id, attempt, owner, JobStatus.SUCCEEDED, None)
            return
        view = seen_view
        items = first_chunk(backlog, self.settings.prompt_budget_chars)
        entries = list(view.memory.entries.values())
        request = ModelRequest(
            messages=consolidation_messages(entries, items),
            schema_name=CONSOLIDATION_SCHEMA_NAME,
            schema=memory_changes_schema(),
            items=[ContextItem(i.id, i.type, i.role, i.content, i.app) for i in items],
            entries=[ContextEntry(e.key, e.content, e.kind, e.status) for e in entries],
        )
        read_uids = {item.uid for item in items}
        proposed = await ask(self, run_id, self.models, self.settings, model_name, request)
        if isinstance(proposed, Failed):
            await self._finish(
                run_id, attempt, owner, JobStatus.FAILED, proposed.message, sorted(read_uids)
            )
            return
        seen = {entry.key: entry.change for entry in entries}
        ended = await self.db.write(
            lambda tx: self._apply(tx, run_id, attempt, owner, view, model_name, items, seen,
                                   proposed)
        )
        count_ended(self.db, self.kind, ended)

    async def _apply(
        self,
        tx: Tx,
        run_id: str,
        attempt: int,
        owner: Owner,
        view: SessionView,
        model_name: str,
        items: Sequence[Item],
        seen: dict[str, str],
        proposed: list[Any],
    ) -> list[str | None]:
        """Apply what the model proposed, having read `items`, to the newest memory; the models
        of the runs queued behind this one that it ended, as it read what they would have."""
        jobs = JobRepository(tx)
        org, session_id = owner.org, view.session.id
        sessions = SessionRepository(tx)
        try:
            state = await sessions.lock(Principal(org), session_id)
            if not await jobs.holds(self.kind, run_id, attempt):
                return []  # its lease ran out while the model worked: the claim since applies it
            if (state.revision, state.head) != (view.session.revision, view.session.head):
                # The session changed while the model worked: its newest memory (S7). Else the
                # view read before the model is the one that holds now, as every change of a
                # session's memory, items or settings grows its revision (S12).
                view = await sessions.view(Principal(org), session_id)
        except NotFound:
            # erased (deleted) while the model worked, before the lock or while it waited for
            # it (an erasure grows the revision): nothing of it is applied
            await self._finish_in(tx, run_id, attempt, owner, JobStatus.SKIPPED, None)
            return []
        # the org's default may have changed meanwhile
        if not state.switches.generate:
            await self._finish_in(tx, run_id, attempt, owner, JobStatus.SKIPPED, None)
            return []
        unprocessed = await jobs.unprocessed(session_id)
        # Only what was read and is still unprocessed on the current branch counts as read.
        read_uids = {item.uid for item in items}
        readable = read_prefix(unprocessed, read_uids)
        if not readable:
            await self._finish_in(tx, run_id, attempt, owner, JobStatus.SUCCEEDED, None)
            return []
        # what the model read or was shown may have been erased while it worked (an erasure,
        # retention, a deleted session whose changes a fork's entries hold)
        erased = await jobs.read_erased(items, sorted(seen.values()))
        kept, dropped = session_changes(
            proposed, view.memory.entries, {item.id for item in readable},
            set(view.memory.processed), seen, erased,
        )
        # A run that keeps nothing stays on the head it read, unless a fork shares that head:
        # what it read is this session's, so it then makes a version of its own (else the fork's
        # history would count the items as processed, while the fork never read them).
        await jobs.apply_consolidation(
            session_id,
            run_id,
            new_head(),
            now_ms(),
            read=[item.uid for item in readable],
            read_ids=[item.id for item in readable],
            read_seq=readable[-1].seq,
            kept=kept,
            uid_of={item.id: item.uid for item in readable},
            dropped=dropped,
            new_version=bool(kept or state.head_shared),
        )
        done: list[str | None] = []
        if len(unprocessed) > len(readable):  # a backlog larger than one prompt: read on
            await jobs.queue_backlog_run(session_id, new_id("run"), model_name, now_ms())
        else:  # every item is read: the runs queued behind this one have nothing to read
            done = await jobs.finish_read_runs(session_id, now_ms())
        await self._ended(tx, run_id, owner)
        return done

    async def _finish(
        self, run_id: str, attempt: int, owner: Owner | None, status: JobStatus,
        error: str | None, tried: Sequence[str] = (),
    ) -> bool:
        return await self.db.write(
            lambda tx: self._finish_in(tx, run_id, attempt, owner, status, error, tried)
        )

    @classmethod
    async def _finish_in(
        cls, tx: Tx, run_id: str, attempt: int, owner: Owner | None, status: JobStatus,
        error: str | None, tried: Sequence[str] = (),
    ) -> bool:
        """End the run as its claim `attempt`; whether it ended (a claim another worker has
        taken since, its lease having run out, ends nothing)."""
        if not await JobRepository(tx).finish_run(run_id, attempt, status, error, now_ms(), tried):
            return False
        await cls._ended(tx, run_id, owner)
        return True

    @staticmethod
    async def _ended(tx: Tx, run_id: str, owner: Owner | None) -> None:
        """A run ended in this transaction: if that emptied its agent's queue, learning is due
        (A2), queued here so that it is never lost. `owner` is the run's org and agent, read
        here when the caller does not know them."""
        if owner is None:
            context = await JobRepository(tx).run_context(run_id)
            if context is None:
                return
            owner = Owner(context.org, context.agent)
        with contextlib.suppress(NotFound):  # an agent deleted meanwhile has nothing to learn
            await queue_learning(tx, owner.org, owner.agent)

    async def refresh(self, who: Principal, session_id: str) -> SessionView:
        """S16: consolidate now. Nothing with `generate` off; 409 without a model."""

        async def queue(tx: Tx) -> str | None:
            sessions = SessionRepository(tx)
            state = await sessions.lock(who, session_id)
            view = await sessions.view(who, session_id)
            if not view.memory.settings.generate:
                return None
            model = resolve_model(state.model, state.agent_model, view.org.model)
            if model is None:
                raise SessionConflict("no model is set for this session, its agent or the org")
            run_id = new_id("run")
            await JobRepository(tx).queue_run(session_id, run_id, model, "refresh", None, now_ms())
            return run_id

        run_id = await self.db.write(queue)
        if run_id is not None:
            self.wake()
            if not await self.wait_for(run_id, REFRESH_WAIT_SECONDS):
                raise SessionConflict("consolidation is still running; read the session later")
        return await self.db.read(lambda tx: SessionRepository(tx).view(who, session_id))

    async def wait_for(self, run_id: str, seconds: float) -> bool:
        """Wait up to `seconds` for a run to end; whether it did. A run of this process wakes
        the wait at once; one of another process is seen within half a second."""

        async def status() -> str | None:
            context = await self.db.read(lambda tx: JobRepository(tx).run_context(run_id))
            return None if context is None else context.status

        async def finished() -> None:
            while await status() in PENDING:
                await self.pool.finished(0.5)

        try:
            await asyncio.wait_for(finished(), seconds)
        except TimeoutError:
            return False
        return True

    async def run(self, who: Principal, session_id: str, run_id: str) -> Run:
        """One run of the session; 404 when the session has no such run."""
        found = await self.find(who, [run_id])
        if run_id not in found or found[run_id].session != session_id:
            raise NotFound(f"session {session_id} has no run {run_id}")
        return found[run_id]

    async def find(self, who: Principal, run_ids: Sequence[str]) -> dict[str, Run]:
        """Runs by id: status, model, error, turn, and the items read, changes kept and dropped."""
        return await self.db.read(
            lambda tx: JobRepository(tx).runs(who.org, who.person, run_ids)
        )

    async def runs(self, who: Principal, session_id: str) -> list[Run]:
        """One session's runs, newest first; a run seen ended comes with the backlog run it
        queued (`settled_list`)."""

        async def work(tx: Tx) -> list[Run]:
            jobs = JobRepository(tx)
            return await settled_list(
                lambda: jobs.session_run_ids(who.org, who.person, session_id),
                lambda ids: jobs.runs(who.org, who.person, ids),
            )

        return await self.db.read(work)
