"""A2, A4-A6, A9: agent learning. When a turn of an agent completes and the agent's queue of
consolidation runs is then empty, a durable learning job is queued in the transaction that
empties it. Workers claim jobs with a lease (as consolidation runs are claimed); a job asks the
org's helper model once per session with items not yet learned from (once per set of its
turns whose item ids are unique: `with_unique_ids`), checks every proposed change (pure
functions in `checks`), and applies what passes as one agent memory version per call, marking
those items learned in the same transaction. So a crash or a second process never loses a job,
and nothing is learned twice.

Which turns teach is fixed when a turn completes (`teaches`): not from a `review` session, not
with the session's `generate` off, not with the org's `agentMemory` off, not from a turn that
only ran an App action (S8).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from app.config import Settings
from app.domain.agents import MadeBy
from app.domain.enums import JobStatus, Maker, SessionKind
from app.domain.items import Item
from app.domain.jobs import Dropped, JobKind, LearningJob, SessionInput, with_unique_ids
from app.domain.principals import Principal
from app.errors import NotFound
from app.memory.changes.checks import agent_changes, named_persons
from app.memory.ids import new_id, now_ms
from app.memory.jobs.prompts import (
    LEARNING_SCHEMA_NAME,
    agent_memory_changes_schema,
    learning_messages,
)
from app.memory.jobs.runner import Failed, Workers, ask
from app.models.base import ContextEntry, ContextItem, ModelRequest
from app.models.registry import Models
from app.store.agent_memory import AgentMemoryRepository
from app.store.database import Database, Tx, settled_list
from app.store.jobs import JobRepository
from app.store.principals import PrincipalRepository
from app.store.sessions import SessionRepository

log = logging.getLogger("openbot_memory.learning")


def teaches(kind: SessionKind, generate: bool, agent_memory: bool, only_app_actions: bool) -> bool:
    """A2, S8: whether a completed turn's items are for the agent to learn from."""
    return kind != SessionKind.REVIEW and generate and agent_memory and not only_app_actions


async def queue_learning(tx: Tx, org: str, agent: str) -> bool:
    """Queue a learning job if the agent's queue is now empty and a turn left something to
    learn (A2); call it in the transaction that empties the queue. Answers whether it did."""
    await AgentMemoryRepository(tx).lock_agent(org, agent)
    return await JobRepository(tx).queue_learning(agent, new_id("lrn"), now_ms())


@dataclass
class Learning:
    """The durable queue of learning jobs and the workers that run them."""

    db: Database
    models: Models
    settings: Settings
    pool: Workers = field(init=False)
    kind: JobKind = field(default="learning", init=False)
    noun: str = field(default="learning job", init=False)
    log: logging.Logger = field(default=log, init=False)

    def __post_init__(self) -> None:
        self.pool = Workers(
            job=self,
            db=self.db,
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

    def ended(self) -> None:
        """Nothing in the process waits on a learning job's end (the clients read its status)."""

    async def fail(self, job: str, attempt: int, error: str) -> bool:
        return await self._finish(job, attempt, JobStatus.FAILED, error)

    async def work(self, job: str, attempt: int) -> None:
        """Run one claimed job to its end: a helper call per session with items to learn from,
        each session's changes applied as it answers."""
        found = await self.db.read(
            lambda tx: JobRepository(tx).learning_input(job)
        )
        if found is None:
            return
        org, agent, model_name = found.org, found.agent, found.helper_model
        if found.agent_memory is False:
            await self._finish(job, attempt, JobStatus.SKIPPED, "the org's agentMemory is off")
            return
        if not model_name:
            await self._finish(job, attempt, JobStatus.SKIPPED, "the org has no helperModel")
            return
        failed: dict[str, str] = {}  # session: its first error
        tried: list[str] = []
        for part in (piece for whole in found.sessions for piece in with_unique_ids(whole)):
            error = await self._learn(job, attempt, org, agent, model_name, part, found.members)
            if error is not None:
                failed.setdefault(part.session, error)
                tried.extend(item.uid for item in part.items)
        status = JobStatus.FAILED if failed else JobStatus.SUCCEEDED
        await self._finish(job, attempt, status, None, tried, model_name, list(failed.items()))

    async def _learn(
        self, job: str, attempt: int, org: str, agent: str, model_name: str,
        part: SessionInput[Item], members: Sequence[str],
    ) -> str | None:
        """One helper call for one session, then its changes applied while the claim `attempt`
        holds; the error, if any."""
        person = part.person  # no person: shared entries only
        if not part.items:  # its turns' items were all learned already: just close them

            async def close(tx: Tx) -> None:
                if await JobRepository(tx).holds(self.kind, job, attempt):
                    await self._record(tx, job, part, model_name, (), [])

            await self.db.write(close)
            return None
        seen = await self.db.read(
            lambda tx: AgentMemoryRepository(tx).entries(org, person or "", [agent])
        )
        # Every entry the person may see, a shared one and their private one of a key alike:
        # the checks must see both (a retracted shared entry stays retracted, A6).
        entries = seen[agent].entries if agent in seen else ()
        request = ModelRequest(
            messages=learning_messages(list(entries), part.items, part.person),
            schema_name=LEARNING_SCHEMA_NAME,
            schema=agent_memory_changes_schema(),
            items=[ContextItem(i.id, i.type, i.role, i.content, i.app, i.author)
                   for i in part.items],
            entries=[ContextEntry(e.key, e.content, e.kind, e.status) for e in entries],
            person=part.person,
        )
        proposed = await ask(self, job, self.models, self.settings, model_name, request)
        if isinstance(proposed, Failed):
            return proposed.message

        async def work(tx: Tx) -> None:
            memory, jobs = AgentMemoryRepository(tx), JobRepository(tx)
            # Session first, then agent: the order every writer takes them in (a turn locks its
            # session, then the agent to queue learning), so no two wait on each other.
            try:
                await SessionRepository(tx).lock(Principal(org), part.session)
            except NotFound:  # erased (deleted) while the model worked: nothing of it applies
                return
            version = await memory.lock_agent(org, agent)
            if not await jobs.holds(self.kind, job, attempt):
                return  # its lease ran out while the model worked: the claim since learns
            now = (await memory.entries(org, person or "", [agent]))[agent].entries
            still = await jobs.unlearned([i.uid for i in part.items])
            # what the model read or was shown, or a person it names, may have been erased
            # while it worked
            principals = PrincipalRepository(tx)
            erased = await jobs.read_erased(part.items, [e.change for e in entries]) or not all(
                [await principals.has_person(org, about)
                 for about in sorted(named_persons(proposed) & set(members))]
            )
            readable = {i.id: i for i in part.items if i.uid in still}
            kept, dropped = agent_changes(
                proposed, entries, now, readable, part.person, members, erased
            )
            uid_of = {i.id: i.uid for i in part.items}
            edits = [replace(k, sources=tuple(uid_of[s] for s in k.sources)) for k in kept]
            maker = MadeBy(Maker.CONSOLIDATION, job=job)
            await memory.apply(org, agent, version, maker, edits, now_ms(), part.session)
            read = [i for i in part.items if i.uid in still]
            await self._record(tx, job, part, model_name, read, dropped)

        await self.db.write(work)
        return None

    @staticmethod
    async def _record(
        tx: Tx, job: str, part: SessionInput[Item], model: str, read: Sequence[Item],
        dropped: Sequence[Dropped],
    ) -> None:
        await JobRepository(tx).record_learning(
            job, part.session, model, now_ms(), [item.uid for item in read], part.turns, dropped
        )

    async def _finish(
        self, job: str, attempt: int, status: JobStatus, error: str | None,
        tried: Sequence[str] = (), model: str | None = None,
        failed: Sequence[tuple[str, str]] = (),
    ) -> bool:
        """End the job as its claim `attempt`; whether it ended (a claim another worker has
        taken since ends nothing): `error` is the job's own, `failed` each session's whose
        helper call failed, with its error (a reader sees those of the sessions they may reach,
        A9)."""
        return await self.db.write(
            lambda tx: JobRepository(tx).finish_learning(
                job, attempt, status, error, now_ms(), tried, model, failed
            )
        )

    async def find(self, who: Principal, ids: Sequence[str]) -> dict[str, LearningJob]:
        """Jobs by id, as `who` may see them (A9)."""
        return await self.db.read(
            lambda tx: JobRepository(tx).learning_jobs(who.org, who.person, ids)
        )

    async def jobs(self, who: Principal, agent: str) -> list[LearningJob]:
        """One agent's learning jobs, newest first; a job seen ended comes with the job it
        queued (`settled_list`)."""

        async def work(tx: Tx) -> list[LearningJob]:
            jobs = JobRepository(tx)
            return await settled_list(
                lambda: jobs.agent_job_ids(who.org, agent),
                lambda ids: jobs.learning_jobs(who.org, who.person, ids),
            )

        return await self.db.read(work)
