"""A2, A4-A6, A9: agent learning. When a turn of an agent completes and the agent's queue of
consolidation runs is then empty, a durable learning job is queued in the transaction that
empties it. Workers claim jobs with a lease (as consolidation runs are claimed); a job asks the
org's helper model once per session with items not yet learned from, checks every proposed
change (pure functions in `checks`), and applies what passes as one agent memory version per
session, marking those items learned in the same transaction. So a crash or a second process
never loses a job, and nothing is learned twice.

Which turns teach is fixed when a turn completes (`teaches`): not from a `review` session, not
with the session's `generate` off, not with the org's `agentMemory` off, not from a turn that
only ran an App action (S8).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.config import Settings
from app.domain.principals import Principal
from app.domain.sessions import Item
from app.memory.agents.memory import Maker, NewChange, apply, lock_agent, read_entries
from app.memory.credentials import prescan
from app.memory.ids import new_id, now_ms
from app.memory.jobs.checks import check_agent_changes, keep_newer_agent_edits
from app.memory.jobs.prompts import (
    LEARNING_SCHEMA_NAME,
    agent_memory_changes_schema,
    failure_message,
    learning_messages,
    parse_answer,
)
from app.memory.jobs.runner import Statements, Workers
from app.models.base import ContextEntry, ContextItem, ModelError, ModelRequest
from app.models.registry import Models
from app.store.database import Database, Tx, settled_list
from app.store.sessions import SessionRepository

log = logging.getLogger("openbot_memory.learning")


def teaches(kind: str, generate: bool, agent_memory: bool, only_app_actions: bool) -> bool:
    """A2, S8: whether a completed turn's items are for the agent to learn from."""
    return kind != "review" and generate and agent_memory and not only_app_actions


async def queue_learning(tx: Tx, org: str, agent: str) -> bool:
    """Queue a learning job if the agent's queue is now empty and a turn left something to
    learn (A2); call it in the transaction that empties the queue. Answers whether it did."""
    await lock_agent(tx, Principal(org), agent)
    row = await tx.row("queue_learning", agent=agent, job={"id": new_id("lrn"), "at": now_ms()})
    return row is not None


@dataclass(frozen=True)
class SessionInput:
    """One session's part of a job: its person, its turns to learn from, and their items."""

    session: str
    person: str | None
    turns: tuple[str, ...]
    items: tuple[Item, ...]


@dataclass
class Learning:
    """The durable queue of learning jobs and the workers that run them."""

    db: Database
    models: Models
    settings: Settings
    pool: Workers = field(init=False)
    on_finished: Callable[[], None] = field(default=lambda: None)

    def __post_init__(self) -> None:
        self.pool = Workers(
            name="learning",
            db=self.db,
            statements=Statements(
                "waiting_learning_jobs", "next_learning_job", "claim_learning_job",
                "extend_learning_lease", "requeue_learning_jobs",
            ),
            run=self.execute,
            count=1,
            poll_seconds=self.settings.worker_poll_seconds,
            lease_seconds=self.settings.run_lease_seconds,
        )

    def wake(self) -> None:
        """A write of this process queued a learning job."""
        self.pool.wake()

    def nudge(self) -> None:
        """A run ended: learning may be due (A2), if its end emptied the agent's queue."""
        self.pool.nudge()

    async def start(self) -> None:
        await self.pool.start()

    async def stop(self) -> None:
        await self.pool.stop()

    async def execute(self, job: str) -> None:
        """Run one claimed job to its end; whatever goes wrong, it ends recorded, never left
        running."""
        try:
            await self._execute(job)
        except Exception as exc:
            log.exception("learning job %s failed unexpectedly", job)
            with contextlib.suppress(Exception):
                await self._finish(job, "failed", f"internal error ({exc.__class__.__name__})")
        finally:
            self.on_finished()

    async def _execute(self, job: str) -> None:
        found = await self.db.read(lambda tx: tx.row("learning_input", job=job))
        if found is None:
            return
        org, agent, model_name = found["org"], found["agent"], found["helperModel"]
        if found["agentMemory"] is False:
            await self._finish(job, "skipped", "the org's agentMemory is off")
            return
        if not model_name:
            await self._finish(job, "skipped", "the org has no helperModel")
            return
        sessions = [
            SessionInput(
                s["session"], s["person"], tuple(s["turns"]),
                tuple(Item.from_record(i) for i in s["items"]),
            )
            for s in found["sessions"]
        ]
        errors: list[str] = []
        tried: list[str] = []
        for part in sessions:
            error = await self._learn(job, org, agent, model_name, part, found["members"])
            if error is not None:
                errors.append(f"{part.session}: {error}")
                tried.extend(item.uid for item in part.items)
        status = "failed" if errors else "succeeded"
        await self._finish(job, status, "; ".join(errors) or None, tried, model_name)

    async def _learn(
        self, job: str, org: str, agent: str, model_name: str, part: SessionInput,
        members: Sequence[str],
    ) -> str | None:
        """One helper call for one session, then its changes applied; the error, if any."""
        person = Principal(org, person=part.person or "")  # no person: shared entries only
        if not part.items:  # its turns' items were all learned already: just close them
            await self.db.write(lambda tx: self._record(tx, job, part, model_name, (), []))
            return None
        seen = await self.db.read(lambda tx: read_entries(tx, person, [agent]))
        # Every entry the person may see, a shared one and their private one of a key alike:
        # the checks must see both (a retracted shared entry stays retracted, A6).
        entries = seen[agent][2] if agent in seen else []
        request = ModelRequest(
            messages=learning_messages(entries, part.items, part.person),
            schema_name=LEARNING_SCHEMA_NAME,
            schema=agent_memory_changes_schema(),
            items=[ContextItem(i.id, i.type, i.role, i.content, i.app, i.author)
                   for i in part.items],
            entries=[ContextEntry(e.key, e.content, e.kind, e.status) for e in entries],
            person=part.person,
        )
        budget = self.settings.model_timeout_seconds * (self.settings.model_retries + 1) + 5
        try:
            model = self.models.get(model_name)
            content = await asyncio.wait_for(model.complete(request), budget)
            proposed = parse_answer(content)
        except (ModelError, ValueError, TimeoutError) as exc:
            message = failure_message(exc, budget)
            log.warning("learning job %s: model %s failed: %s", job, model_name, message)
            return message
        await asyncio.to_thread(prescan, proposed)  # S10's scan, before the locks

        async def work(tx: Tx) -> None:
            # Session first, then agent: the order every writer takes them in (a turn locks its
            # session, then the agent to queue learning), so no two wait on each other.
            await SessionRepository(tx).lock(Principal(org), part.session)
            version = await lock_agent(tx, Principal(org), agent)
            now = (await read_entries(tx, person, [agent]))[agent][2]
            still = {row["uid"] for row in await tx.rows(
                "unlearned_items", uids=[i.uid for i in part.items])}
            readable = {i.id: i for i in part.items if i.uid in still}
            kept, dropped = check_agent_changes(
                proposed, entries, readable, part.person, members
            )
            kept, overtaken = keep_newer_agent_edits(kept, now)
            uid_of = {i.id: i.uid for i in part.items}
            changes = [
                NewChange(
                    k.op, k.key, k.owner, k.content, k.kind, k.status, k.about, k.visibility,
                    sources=tuple((part.session, uid_of[s]) for s in k.sources),
                )
                for k in kept
            ]
            await apply(tx, org, agent, version, Maker("consolidation", job=job), changes)
            read = [i for i in part.items if i.uid in still]
            await self._record(tx, job, part, model_name, read, [*dropped, *overtaken])

        await self.db.write(work)
        return None

    @staticmethod
    async def _record(
        tx: Tx, job: str, part: SessionInput, model: str, read: Sequence[Item],
        dropped: Sequence[Any],
    ) -> None:
        await tx.row(
            "record_learning",
            job=job,
            session=part.session,
            model=model,
            at=now_ms(),
            read=[item.uid for item in read],
            turns=list(part.turns),
            dropped=[
                {"op": d.op, "key": d.key, "reason": d.reason, "proposal": d.proposal}
                for d in dropped
            ],
        )

    async def _finish(
        self, job: str, status: str, error: str | None, tried: Sequence[str] = (),
        model: str | None = None,
    ) -> None:
        await self.db.write(
            lambda tx: tx.row(
                "finish_learning_job", job=job, status=status, error=error, now=now_ms(),
                tried=list(tried), model=model,
            )
        )

    async def find(self, who: Principal, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Jobs by id, as `who` may see them (A9)."""
        return await self.db.read(lambda tx: self._find_in(tx, who, ids))

    @staticmethod
    async def _find_in(tx: Tx, who: Principal, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        rows = await tx.rows(
            "find_learning_jobs", org=who.org, person=who.person, all=who.person is None,
            ids=list(ids),
        )
        return {row["job"]["id"]: row["job"] for row in rows}

    async def jobs(self, who: Principal, agent: str) -> list[dict[str, Any]]:
        """One agent's learning jobs, newest first; a job seen ended comes with the job it
        queued (`settled_list`)."""

        async def work(tx: Tx) -> list[dict[str, Any]]:
            async def ids_of() -> list[str]:
                rows = await tx.rows("agent_learning_jobs", org=who.org, agents=[agent])
                return list(rows[0]["jobs"]) if rows else []

            return await settled_list(ids_of, lambda ids: self._find_in(tx, who, ids))

        return await self.db.read(work)
