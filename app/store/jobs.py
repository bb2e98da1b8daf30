"""The job repository: the durable queues of consolidation runs and learning jobs (queue, claim
under a lease, renew, requeue, finish), what a job reads, and what it records."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from app.domain.enums import JobStatus
from app.domain.items import Item
from app.domain.jobs import (
    MOST_LAPSES,
    Claim,
    Dropped,
    JobKind,
    Kept,
    LearningInput,
    LearningJob,
    Outcome,
    Run,
    RunContext,
    SessionInput,
    Spent,
)
from app.store.agent_memory import reader
from app.store.database import Tx
from app.store.records import item, org_settings, record


@dataclass(frozen=True, slots=True)
class _Queue:
    """The statements of one kind of job: `waiting` reads whether any job is queued or ran out
    of its lease (so an idle worker writes nothing), `next` finds a candidate (its `id`, and the
    `claimKey` no two workers may run at once) and locks it, `claim` checks again and takes it
    with a lease, `extend` renews a lease, `held` reads whether a claim still holds (under the
    job's lock), `requeue` puts back the jobs whose lease ran out."""

    waiting: str
    next: str
    claim: str
    extend: str
    held: str
    requeue: str


_QUEUES: dict[JobKind, _Queue] = {
    "consolidation": _Queue(
        "waiting_runs", "next_run", "claim_run", "extend_run_lease", "run_held",
        "requeue_runs",
    ),
    "learning": _Queue(
        "waiting_learning_jobs", "next_learning_job", "claim_learning_job",
        "extend_learning_lease", "learning_job_held", "requeue_learning_jobs",
    ),
}


def _dropped(dropped: Sequence[Dropped]) -> list[dict[str, str | None]]:
    return [{"op": d.op, "key": d.key, "reason": d.reason, "proposal": d.proposal,
             "about": d.about} for d in dropped]


class JobRepository:
    """Runs and learning jobs in one transaction."""

    def __init__(self, tx: Tx) -> None:
        self.tx = tx

    # ---- the queues, for either kind --------------------------------------------------------

    async def waiting(self, kind: JobKind, now: int) -> tuple[bool, bool]:
        """Whether a job of `kind` is queued, and whether one ran out of its lease."""
        row = await self.tx.row(_QUEUES[kind].waiting, now=now)
        return (bool(row["queued"]), bool(row["expired"])) if row else (False, False)

    async def requeue(self, kind: JobKind, now: int) -> tuple[int, list[Spent]]:
        """Put the jobs whose lease ran out back in the queue; answer how many, and the jobs
        whose lease lapsed `MOST_LAPSES` times, which are not queued again."""
        row = await self.tx.row(_QUEUES[kind].requeue, now=now, most=MOST_LAPSES)
        if row is None:
            return 0, []
        spent = [Spent(str(s["job"]), int(s["attempt"])) for s in row["spent"]]
        return int(row["requeued"]), spent

    async def claim(
        self, kind: JobKind, busy: Sequence[str], now: int, lease_ms: int
    ) -> Claim | None:
        """Take the next queued job whose claim key is not `busy`, with a lease of `lease_ms`."""
        queue = _QUEUES[kind]
        candidate = await self.tx.row(queue.next, busy=sorted(busy))
        if candidate is None:
            return None
        claimed = await self.tx.row(queue.claim, job=candidate["id"], now=now, lease=lease_ms)
        if not claimed:
            return None
        return Claim(candidate["id"], candidate["claimKey"], int(claimed["attempt"]))

    async def extend(self, kind: JobKind, job: str, attempt: int, until: int) -> None:
        """Renew a running job's lease until `until`, if it is still the claim `attempt`."""
        await self.tx.row(_QUEUES[kind].extend, job=job, attempt=attempt, until=until)

    async def holds(self, kind: JobKind, job: str, attempt: int) -> bool:
        """Whether `job` still runs as the claim `attempt`, read under its lock: what a worker
        applies is applied only while its claim holds."""
        return await self.tx.row(_QUEUES[kind].held, job=job, attempt=attempt) is not None

    async def outcome(self, job: str) -> Outcome | None:
        """How a run or learning job ended, as the graph recorded it; None when it is gone."""
        row = await self.tx.row("job_outcome", id=job)
        if row is None:
            return None
        return Outcome(
            JobStatus(row["status"]), row["model"], int(row["attempt"]), tuple(row["dropped"])
        )

    async def pending(self) -> dict[tuple[str, str], int]:
        """How many jobs of each kind are queued and running."""
        rows = await self.tx.rows("count_pending_jobs")
        return {(row["kind"], row["status"]): int(row["n"]) for row in rows}

    # ---- consolidation runs -----------------------------------------------------------------

    async def queue_run(
        self, session: str, id: str, model: str, trigger: str, turn: str | None, at: int
    ) -> None:
        """Queue a consolidation run of `session`."""
        run = {"id": id, "model": model, "turn": turn, "trigger": trigger, "at": at}
        await self.tx.row("queue_run", id=session, run=run)

    async def queue_backlog_run(self, session: str, id: str, model: str, at: int) -> None:
        """Queue a run for the rest of a backlog, unless a run of the session is queued."""
        await self.tx.row("queue_backlog_run", id=session,
                          run={"id": id, "model": model, "at": at})

    async def run_context(self, run: str) -> RunContext | None:
        """A run and whose it is; None when there is no such run."""
        row = await self.tx.row("run_context", run=run)
        if row is None:
            return None
        return RunContext(
            run=row["run"]["id"],
            model=row["run"]["model"],
            status=JobStatus(row["run"]["status"]),
            session=row["session"],
            agent=row["agent"],
            org=row["org"],
            generate_override=row["generateOverride"],
            org_generate=org_settings(row["switches"]).generate,
        )

    async def unprocessed(self, session: str) -> list[Item]:
        """The items consolidation may read, oldest first: after the processed ledger's mark,
        and not a person's memory edit."""
        rows = await self.tx.rows("unprocessed_items", id=session)
        return [item(row["item"]) for row in rows]

    async def apply_consolidation(
        self, session: str, run: str, head: str, at: int, read: Sequence[str],
        read_ids: Sequence[str], read_seq: int, kept: Sequence[Kept],
        uid_of: Mapping[str, str], dropped: Sequence[Dropped], new_version: bool,
    ) -> None:
        """Record what a run read (`read`: item uids, `read_ids`: their ids, up to `read_seq`),
        kept and dropped. With `new_version` the kept changes apply as a new version of the
        session's memory; without, the run stays on the head it read."""
        await self.tx.row(
            "apply_consolidation" if new_version else "record_quiet_run",
            id=session,
            run={"id": run, "head": head, "at": at},
            read=list(read),
            readIds=list(read_ids),
            readSeq=read_seq,
            kept=[
                {
                    "id": f"chg-{uuid.uuid4().hex}",
                    "op": k.op,
                    "key": k.key,
                    "content": k.content,
                    "kind": k.kind,
                    "status": k.status,
                    "replaces": k.replaces,
                    "sources": [uid_of[source] for source in k.sources],
                }
                for k in kept
            ],
            dropped=_dropped(dropped),
        )

    async def finish_read_runs(self, session: str, now: int) -> list[str | None]:
        """End the session's queued runs as succeeded (a run read what they would have); answer
        the model of each."""
        rows = await self.tx.rows("finish_read_runs", id=session, now=now)
        return [row["model"] for row in rows]

    async def finish_run(
        self, run: str, attempt: int, status: JobStatus, error: str | None, now: int,
        tried: Sequence[str],
    ) -> bool:
        """End a run with `status`, if it is still running as the claim `attempt`; whether it
        did. `tried` are the uids of the items a failed run tried."""
        row = await self.tx.row("finish_run", run=run, attempt=attempt, status=status,
                                error=error, now=now, tried=list(tried))
        return row is not None

    async def runs(self, org: str, person: str | None, ids: Sequence[str]) -> dict[str, Run]:
        """Runs by id, of sessions the reader may reach."""
        rows = await self.tx.rows("find_runs", org=org, person=person, ids=list(ids))
        return {row["run"]["id"]: record(Run, row["run"]) for row in rows}

    async def session_run_ids(self, org: str, person: str | None, session: str) -> list[str]:
        """The ids of a session's runs, newest first."""
        rows = await self.tx.rows("session_runs", org=org, person=person, ids=[session])
        return list(rows[0]["runs"]) if rows else []

    # ---- learning jobs ----------------------------------------------------------------------

    async def queue_learning(self, agent: str, id: str, at: int) -> bool:
        """Queue a learning job of `agent` if its queue of runs is empty and a turn left
        something to learn; whether it did."""
        row = await self.tx.row("queue_learning", agent=agent, job={"id": id, "at": at})
        return row is not None

    async def learning_input(self, job: str) -> LearningInput[Item] | None:
        """What a learning job reads; None when there is no such job."""
        row = await self.tx.row("learning_input", job=job)
        if row is None:
            return None
        return LearningInput(
            agent=row["agent"],
            org=row["org"],
            helper_model=row["helperModel"],
            agent_memory=row["agentMemory"],
            members=tuple(row["members"]),
            sessions=[
                SessionInput(s["session"], s["person"], tuple(s["turns"]),
                             tuple(item(i) for i in s["items"]))
                for s in row["sessions"]
            ],
        )

    async def read_erased(self, items: Sequence[Item], changes: Sequence[str]) -> bool:
        """Whether an erasure reached what a model read since it read it: `items`, or the
        changes of the entries it was shown (by id)."""
        row = await self.tx.row(
            "read_erased", uids=sorted(i.uid for i in items if not i.erased),
            expired=sorted(i.uid for i in items if i.erased and i.expired), changes=list(changes),
        )
        return bool(row and row["erased"])

    async def unlearned(self, uids: Sequence[str]) -> set[str]:
        """The uids among `uids` of items no job has learned from."""
        rows = await self.tx.rows("unlearned_items", uids=list(uids))
        return {row["uid"] for row in rows}

    async def record_learning(
        self, job: str, session: str, model: str, at: int, read: Sequence[str],
        turns: Sequence[str], dropped: Sequence[Dropped],
    ) -> None:
        """Record what a job learned from one session: the item uids it read, the turns it
        closed, and the changes it dropped."""
        await self.tx.row(
            "record_learning", job=job, session=session, model=model, at=at, read=list(read),
            turns=list(turns), dropped=_dropped(dropped),
        )

    async def finish_learning(
        self, job: str, attempt: int, status: JobStatus, error: str | None, now: int,
        tried: Sequence[str], model: str | None, failed: Sequence[tuple[str, str]] = (),
    ) -> bool:
        """End a learning job with `status` and its own `error`, if it is still running as the
        claim `attempt`; whether it did. `tried` are the uids of the items it tried, `failed`
        the sessions whose helper call failed, with their errors."""
        row = await self.tx.row(
            "finish_learning_job", job=job, attempt=attempt, status=status, error=error,
            now=now, tried=list(tried), model=model,
            failed=[{"session": session, "error": text} for session, text in failed],
        )
        return row is not None

    async def learning_jobs(
        self, org: str, person: str | None, ids: Sequence[str]
    ) -> dict[str, LearningJob]:
        """Learning jobs by id, as the reader may see them (A9)."""
        rows = await self.tx.rows(
            "find_learning_jobs", **reader(org, person), ids=list(ids)
        )
        return {row["job"]["id"]: record(LearningJob, row["job"]) for row in rows}

    async def agent_job_ids(self, org: str, agent: str) -> list[str]:
        """The ids of an agent's learning jobs, newest first."""
        rows = await self.tx.rows("agent_learning_jobs", org=org, agents=[agent])
        return list(rows[0]["jobs"]) if rows else []
