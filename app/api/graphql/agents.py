"""Agents: the configured assistants of an org, their sessions, and their lasting memory
(A10, A11) as the caller may see it (A9)."""

from __future__ import annotations

from typing import Annotated, Any

import strawberry

from app.api.graphql.connections import (
    DEFAULT_FIRST,
    Connection,
    Keyset,
    Page,
    connection,
    keyed_page,
    page_of,
)
from app.api.graphql.context import GraphInfo
from app.api.graphql.enums import (
    ChangeOp,
    EntryStatus,
    JobStatus,
    Kind,
    Maker,
    Visibility,
    enum,
)
from app.api.graphql.scalars import EpochMillis
from app.api.graphql.sessions import Session
from app.api.graphql.timeline import Item
from app.domain import agents as values
from app.memory.agents import entries as agent_entries
from app.memory.sessions import commands

AGENT_ENTRIES = Keyset("agentEntries", (str,))
AGENT_CHANGES = Keyset("agentChanges", (str,))
LOG = Keyset("log", (int,))
SESSIONS = Keyset("sessions", (int, str))
AGENTS = Keyset("agents", (int, str))
JOBS = Keyset("learningJobs", (int, str))


@strawberry.type
class AgentSource:
    """A3: an item of a session that supports an agent entry; both are null for a caller who
    may not reach that session (another member's)."""

    session_id: strawberry.Private[str]
    uid: strawberry.Private[str]

    @strawberry.field
    async def session(
        self, info: GraphInfo
    ) -> Annotated[Session, strawberry.lazy("app.api.graphql.sessions")] | None:
        return Session.maybe(await info.context.sessions.load(self.session_id))

    @strawberry.field
    async def item(
        self, info: GraphInfo
    ) -> Annotated[Item, strawberry.lazy("app.api.graphql.timeline")] | None:
        found = await info.context.item.load(self.uid)
        return None if found is None else Item.from_domain(found)


def _sources(sources: tuple[agent_entries.Source, ...]) -> list[AgentSource]:
    return [AgentSource(session_id=s.session, uid=s.uid) for s in sources]


@strawberry.type
class LearnedDrop:
    """A change the helper model proposed that broke a rule, and which one."""

    op: str
    key: str
    reason: str
    proposal: str
    session: str | None


@strawberry.type
class LearningJob:
    """One learning job of an agent (A2): the helper model, what it read, kept and dropped."""

    id: str
    status: JobStatus
    model: str | None
    error: str | None
    queued_at: EpochMillis
    started_at: EpochMillis | None
    finished_at: EpochMillis | None
    attempts: int
    read: list[str] = strawberry.field(description="The ids of the items it learned from.")
    tried: list[str] = strawberry.field(
        description="The ids of the items a failed call tried (they stay to learn from)."
    )
    sessions: list[str] = strawberry.field(description="The sessions it learned from.")
    dropped: list[LearnedDrop]
    kept_ids: strawberry.Private[list[str]]

    @classmethod
    def maybe(cls, job: dict[str, Any] | None) -> LearningJob | None:
        if job is None:
            return None
        finished, started = job.get("finishedAt"), job.get("startedAt")
        return cls(
            id=job["id"],
            status=enum(JobStatus, job["status"]),
            model=job.get("model"),
            error=job.get("error"),
            queued_at=EpochMillis(job["queuedAt"]),
            started_at=None if started is None else EpochMillis(started),
            finished_at=None if finished is None else EpochMillis(finished),
            attempts=job.get("attempts") or 0,
            read=list(job.get("read") or []),
            tried=list(job.get("tried") or []),
            sessions=list(job.get("sessions") or []),
            dropped=[LearnedDrop(**d) for d in job.get("dropped") or []],
            kept_ids=list(job.get("kept") or []),
        )

    @strawberry.field(description="The agent memory changes it made.")
    async def changes(self, info: GraphInfo) -> list[AgentChange]:
        chains = await info.context.agent_histories.load_many(self.kept_ids)
        return [AgentChange.from_domain(chain[0]) for chain in chains if chain]


@strawberry.type
class AgentChange:
    """One recorded change of an agent entry: its version, what made it, before and after."""

    id: str
    version: int
    op: ChangeOp
    maker: Maker
    person: str | None = strawberry.field(description="the person who made it, if one did")
    key: str
    before: str | None
    content: str
    kind: Kind
    status: EntryStatus
    about: str | None
    visibility: Visibility
    at: EpochMillis
    job_id: strawberry.Private[str | None]
    sources: list[AgentSource]

    @strawberry.field(description="The learning job that made it, if one did.")
    async def job(self, info: GraphInfo) -> LearningJob | None:
        if self.job_id is None:
            return None
        return LearningJob.maybe(await info.context.jobs.load(self.job_id))

    @classmethod
    def from_domain(cls, change: agent_entries.AgentChange) -> AgentChange:
        return cls(
            id=change.id,
            version=change.version,
            op=enum(ChangeOp, change.op),
            maker=enum(Maker, change.maker),
            person=change.person,
            key=change.key,
            before=change.before_content,
            content=change.content,
            kind=enum(Kind, change.kind),
            status=enum(EntryStatus, change.status),
            about=change.about,
            visibility=enum(Visibility, change.visibility),
            at=EpochMillis(change.at),
            job_id=change.job,
            sources=_sources(change.sources),
        )


@strawberry.type
class AgentEntry:
    """A1: one lasting experience of an agent under one key."""

    key: str
    content: str
    kind: Kind
    status: EntryStatus
    about: str | None = strawberry.field(description="the person it is about (A5)")
    visibility: Visibility
    updated_at: EpochMillis
    sources: list[AgentSource]
    change_id: strawberry.Private[str]

    @classmethod
    def from_domain(cls, entry: agent_entries.AgentEntry) -> AgentEntry:
        return cls(
            key=entry.key,
            content=entry.content,
            kind=enum(Kind, entry.kind),
            status=enum(EntryStatus, entry.status),
            about=entry.about,
            visibility=enum(Visibility, entry.visibility),
            updated_at=EpochMillis(entry.updated_at),
            sources=_sources(entry.sources),
            change_id=entry.change,
        )

    @strawberry.field(description="The entry's changes, newest first.")
    async def changes(
        self, info: GraphInfo, first: int = DEFAULT_FIRST, after: str | None = None
    ) -> Connection[AgentChange]:
        page = page_of(AGENT_CHANGES, first, after)
        loader = info.context.page("agent_changes", page.after_part(), first)
        found = await loader.load(self.change_id)
        return connection(AGENT_CHANGES, page, found, lambda c: (c.id,), AgentChange.from_domain)


@strawberry.type
class AgentLogEntry:
    """A11: one version of an agent's memory and the keys it changed that the caller may see."""

    version: int
    at: EpochMillis
    maker: Maker
    person: str | None
    keys: list[str]


@strawberry.type
class AgentMemory:
    """A10: an agent's memory as the caller may see it, and its version."""

    version: int
    agent_id: strawberry.Private[str]
    by_key: strawberry.Private[dict[str, AgentEntry]]

    @classmethod
    def from_domain(cls, agent_id: str, memory: agent_entries.AgentMemory) -> AgentMemory:
        return cls(
            version=memory.version,
            agent_id=agent_id,
            by_key={key: AgentEntry.from_domain(e) for key, e in memory.entries.items()},
        )

    @strawberry.field(
        description="The entries the caller may see, by the key each is listed under (a private "
        "entry of the caller's wins over the shared one of its key)."
    )
    def entries(
        self, first: int = DEFAULT_FIRST, after: str | None = None
    ) -> Connection[AgentEntry]:
        page = page_of(AGENT_ENTRIES, first, after)
        rows = keyed_page(self.by_key, page)
        return connection(
            AGENT_ENTRIES, page, rows, lambda kv: (kv[0],), lambda kv: kv[1], len(self.by_key)
        )

    @strawberry.field(description="A11: the versions of the memory, oldest first.")
    async def log(
        self, info: GraphInfo, first: int = DEFAULT_FIRST, after: str | None = None
    ) -> Connection[AgentLogEntry]:
        ctx = info.context
        page = page_of(LOG, first, after)
        found = await ctx.service.agent_memory.read_log(
            ctx.who, self.agent_id, page.after_part() or 0, first + 1
        )
        return connection(
            LOG, page, found, lambda e: (e.version,),
            lambda e: AgentLogEntry(
                version=e.version, at=EpochMillis(e.at), maker=enum(Maker, e.maker),
                person=e.person, keys=list(e.keys),
            ),
        )


@strawberry.type
class Agent:
    """A configured assistant of an org."""

    id: str
    name: str
    shared: bool
    model: str | None
    created_at: strawberry.Private[int]

    @classmethod
    def from_domain(cls, agent: values.Agent) -> Agent:
        return cls(
            id=agent.id, name=agent.name, shared=agent.shared, model=agent.model,
            created_at=agent.created_at,
        )

    @classmethod
    def maybe(cls, agent: values.Agent | None) -> Agent | None:
        return None if agent is None else cls.from_domain(agent)

    @strawberry.field(description="The agent's sessions the caller may reach, oldest first.")
    async def sessions(
        self, info: GraphInfo, first: int = DEFAULT_FIRST, after: str | None = None
    ) -> Connection[Session]:
        page = page_of(SESSIONS, first, after)
        ids = await info.context.page("agent_sessions", page.after, first).load(self.id)
        return await sessions_connection(info, page, ids)

    @strawberry.field(description="A2: the agent's learning jobs, newest first.")
    async def learning_jobs(
        self, info: GraphInfo, first: int = DEFAULT_FIRST, after: str | None = None
    ) -> Connection[LearningJob]:
        page = page_of(JOBS, first, after)
        ids = await info.context.page("jobs", page.after, first).load(self.id)
        jobs = [job for job in map(LearningJob.maybe, await info.context.jobs.load_many(ids))
                if job is not None]
        return connection(JOBS, page, jobs, lambda j: (j.queued_at, j.id), lambda j: j)

    @strawberry.field(description="A10: the agent's lasting memory, as the caller may see it.")
    async def memory(self, info: GraphInfo) -> AgentMemory:
        found = await info.context.agent_memories.load(self.id)
        assert found is not None  # the agent was just found in the caller's org
        return AgentMemory.from_domain(self.id, found)


async def sessions_connection(info: GraphInfo, page: Page, ids: list[str]) -> Connection[Session]:
    """A page of sessions from the ids a keyset read found (at most `first + 1`)."""
    views = await info.context.sessions.load_many(ids)
    sessions = [session for session in map(Session.maybe, views) if session is not None]
    return connection(SESSIONS, page, sessions, lambda s: (s.created_at, s.id), lambda s: s)


@strawberry.type
class Promoted:
    """A12: the agent a subagent became, and its memory."""

    agent: Agent
    memory: AgentMemory


@strawberry.type
class AgentMutation:
    @strawberry.mutation(
        description="A12: make a subagent session's lasting entries the memory of a new agent."
    )
    async def promote(
        self, info: GraphInfo, session_id: strawberry.ID, name: str | None = None
    ) -> Promoted:
        ctx = info.context
        agent, memory = await ctx.service.promotion.promote(ctx.who, str(session_id), name)
        return Promoted(
            agent=Agent.from_domain(agent), memory=AgentMemory.from_domain(agent.id, memory)
        )

    @strawberry.mutation(
        description="A10: add or replace an agent entry and make it active (A6: the only way "
        "back for a retracted one)."
    )
    async def remember_for_agent(
        self, info: GraphInfo, agent_id: strawberry.ID, expected: int, key: str, content: str,
        kind: Kind, about: str | None = None, visibility: Visibility = Visibility.SHARED,
    ) -> AgentMemory:
        ctx = info.context
        command = commands.AgentRemember(key, content, kind.value, about, visibility.value)
        memory = await ctx.service.agent_memory.command(
            ctx.who, str(agent_id), expected, command, field_prefix=""
        )
        return AgentMemory.from_domain(str(agent_id), memory)

    @strawberry.mutation(description="A10: retract an agent entry.")
    async def forget_for_agent(
        self, info: GraphInfo, agent_id: strawberry.ID, expected: int, key: str,
        about: str | None = None,
    ) -> AgentMemory:
        ctx = info.context
        command = commands.AgentForget(commands.check_key(key), about)
        memory = await ctx.service.agent_memory.command(
            ctx.who, str(agent_id), expected, command, field_prefix=""
        )
        return AgentMemory.from_domain(str(agent_id), memory)
