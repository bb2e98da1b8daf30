"""What REST (and MCP, which answers the same JSON) answers: one typed dict per shape, and the
function beside it that builds it from the domain's values.

A shape is a `TypedDict`, so an answer is the plain dict the encoder writes (a 10,000-entry view
is built per request, and nothing on the way out is validated again), while pydantic reads the
same declaration for the response schemas of `/openapi.json`."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Annotated, NotRequired

from pydantic import WithJsonSchema
from typing_extensions import TypedDict

from app.domain import agents as agent_values
from app.domain import jobs
from app.domain import sessions as values
from app.domain.agents import Agent as AgentValue
from app.domain.enums import JobStatus, Kind, Maker, SessionKind, Status, TurnStatus, Visibility
from app.domain.erasures import Erasure
from app.domain.turns import Turn as TurnValue
from app.memory.turns import instructions
from app.memory.views import search


def _words(enum: type[StrEnum]) -> WithJsonSchema:
    """The JSON Schema of a field that holds one word of `enum` (the domain keeps it as str)."""
    return WithJsonSchema({"type": "string", "enum": [member.value for member in enum]})


KindWord = Annotated[str, _words(Kind)]
StatusWord = Annotated[str, _words(Status)]


class Health(TypedDict):
    status: str


class Agent(TypedDict):
    id: str
    name: str
    shared: bool
    model: str | None


def agent_json(agent: AgentValue) -> Agent:
    return {"id": agent.id, "name": agent.name, "shared": agent.shared, "model": agent.model}


class Agents(TypedDict):
    agents: list[Agent]


class Entry(TypedDict):
    """S1: one fact under one key; `sources` are the ids of the items behind it."""

    key: str
    content: str
    kind: KindWord
    sources: list[str]
    updatedAt: int
    status: StatusWord


def entry_json(entry: values.Entry) -> Entry:
    return {
        "key": entry.key,
        "content": entry.content,
        "kind": entry.kind,
        "sources": list(entry.sources),
        "updatedAt": entry.updated_at,
        "status": entry.status,
    }


def entries_json(entries: Iterable[tuple[str, values.Entry]]) -> dict[str, Entry]:
    return {key: entry_json(entry) for key, entry in entries}


class Switches(TypedDict):
    use: bool
    generate: bool


class Overrides(TypedDict):
    """What a session set itself: a switch it does not override is absent."""

    use: NotRequired[bool]
    generate: NotRequired[bool]


def overrides_json(overrides: values.Overrides) -> Overrides:
    out: Overrides = {}
    if overrides.use is not None:
        out["use"] = overrides.use
    if overrides.generate is not None:
        out["generate"] = overrides.generate
    return out


class Memory(TypedDict):
    """S2: a session's memory: its entries by key, newest first, the items consolidation
    processed, the switches in force and what the session overrides."""

    entries: dict[str, Entry]
    processed: list[str]
    settings: Switches
    overrides: Overrides


def memory_json(memory: values.Memory) -> Memory:
    return {
        "entries": entries_json(memory.entries.items()),
        "processed": list(memory.processed),
        "settings": {"use": memory.settings.use, "generate": memory.settings.generate},
        "overrides": overrides_json(memory.overrides),
    }


class Session(TypedDict):
    id: str
    agent: str
    kind: Annotated[str, _words(SessionKind)]
    head: str
    revision: int
    person: str | None
    model: str | None
    parent: str | None
    forkedFrom: str | None
    forkedAt: str | None
    createdAt: int


def session_json(session: values.Session) -> Session:
    return {
        "id": session.id,
        "agent": session.agent,
        "kind": session.kind,
        "head": session.head,
        "revision": session.revision,
        "person": session.person,
        "model": session.model,
        "parent": session.parent,
        "forkedFrom": session.forked_from,
        "forkedAt": session.forked_at,
        "createdAt": session.created_at,
    }


class SessionView(TypedDict):
    """The Session view: the session and its memory."""

    session: Session
    memory: Memory


def session_view_json(view: values.SessionView) -> SessionView:
    return {"session": session_json(view.session), "memory": memory_json(view.memory)}


class Sessions(TypedDict):
    sessions: list[SessionView]


class Item(TypedDict):
    """One item of a session's timeline, with the turn it came in (None: a memory edit's)."""

    id: str
    type: str
    role: str | None
    content: str | None
    app: str | None
    author: str | None
    at: int
    turn: str | None


def item_json(item: values.Item) -> Item:
    return {
        "id": item.id,
        "type": item.type,
        "role": item.role,
        "content": item.content,
        "app": item.app,
        "author": item.author,
        "at": item.at,
        "turn": item.turn,
    }


class Turn(TypedDict):
    id: str
    status: Annotated[str, _words(TurnStatus)]
    model: str | None
    items: list[str]
    shown: list[str]
    shownAgent: list[str]
    at: int
    completedAt: int | None


class TurnSession(TypedDict):
    """The session a turn was recorded in, at the revision and head after it."""

    id: str
    head: str
    revision: int


class RunRef(TypedDict):
    id: str
    status: Annotated[str, _words(JobStatus)]


class TurnView(TypedDict):
    """A turn and its session; with `?wait`, the consolidation run it queued."""

    turn: Turn
    session: TurnSession
    run: NotRequired[RunRef]


def turn_view_json(turn: TurnValue) -> TurnView:
    return {
        "turn": {
            "id": turn.id,
            "status": turn.status,
            "model": turn.model,
            "items": list(turn.items),
            "shown": list(turn.shown),
            "shownAgent": list(turn.shown_agent),
            "at": turn.at,
            "completedAt": turn.completed_at,
        },
        "session": {"id": turn.session, "head": turn.head, "revision": turn.revision},
    }


class IncludedKeys(TypedDict):
    session: list[str]
    agent: list[str]


class Instructions(TypedDict):
    """The memory text a turn would be given now, and the keys it includes."""

    memory: str
    included: IncludedKeys


def instructions_json(shown: instructions.Instructions) -> Instructions:
    return {
        "memory": shown.text,
        "included": {"session": list(shown.keys), "agent": list(shown.agent_keys)},
    }


class Dropped(TypedDict):
    """A proposed change a check refused, why, and the change as the model sent it (JSON)."""

    op: str | None
    key: str | None
    reason: str | None
    proposal: str | None


class Run(TypedDict):
    """A consolidation run: its state, what it read, the changes it kept and dropped."""

    id: str
    status: Annotated[str, _words(JobStatus)]
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
    status: Annotated[str, _words(JobStatus)]
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


class Version(TypedDict):
    id: str
    cause: str
    at: int
    parent: str | None
    revertedFrom: str | None
    added: list[str]
    current: bool


def version_json(version: values.Version) -> Version:
    return {
        "id": version.id,
        "cause": version.cause,
        "at": version.at,
        "parent": version.parent,
        "revertedFrom": version.reverted_from,
        "added": list(version.added),
        "current": version.current,
    }


class Versions(TypedDict):
    versions: list[Version]


class VersionRef(TypedDict):
    id: str
    cause: str
    at: int


class VersionMemory(TypedDict):
    entries: dict[str, Entry]
    processed: list[str]


class VersionView(TypedDict):
    """A version as it was: its memory and a page of its timeline."""

    version: VersionRef
    memory: VersionMemory
    items: list[Item]


def version_view_json(
    version: values.VersionRef, entries: Iterable[values.Entry], processed: list[str],
    items: Iterable[values.Item],
) -> VersionView:
    return {
        "version": {"id": version.id, "cause": version.cause, "at": version.at},
        "memory": {
            "entries": entries_json((entry.key, entry) for entry in entries),
            "processed": processed,
        },
        "items": [item_json(item) for item in items],
    }


class OrgSettings(TypedDict):
    memory: Switches
    agentMemory: bool
    helperModel: str | None
    model: str | None


def org_settings_json(settings: values.OrgSettings) -> OrgSettings:
    return {
        "memory": {"use": settings.use, "generate": settings.generate},
        "agentMemory": settings.agent_memory,
        "helperModel": settings.helper_model,
        "model": settings.model,
    }


class ErasureCounts(TypedDict):
    """What an erasure made tombstones of."""

    sessions: int
    items: int
    entries: int
    agentEntries: int
    changes: int
    jobs: int


class ErasureRecord(TypedDict):
    """An erasure: its id, the person erased, when, and its counts (no personal content)."""

    id: str
    person: str
    at: int
    counts: ErasureCounts


class ErasureView(TypedDict):
    erasure: ErasureRecord


class Erasures(TypedDict):
    erasures: list[ErasureRecord]


class Deleted(TypedDict):
    """A deleted session: its id (the session is not found afterwards)."""

    deleted: str


def erasure_json(erasure: Erasure) -> ErasureRecord:
    c = erasure.counts
    return {
        "id": erasure.id, "person": erasure.person, "at": erasure.at,
        "counts": {"sessions": c.sessions, "items": c.items, "entries": c.entries,
                   "agentEntries": c.agent_entries, "changes": c.changes, "jobs": c.jobs},
    }


class Source(TypedDict):
    """A3: an item of a session that supports an agent entry."""

    session: str
    item: str


class AgentEntry(TypedDict):
    key: str
    content: str
    kind: KindWord
    sources: list[Source]
    updatedAt: int
    status: StatusWord
    about: str | None
    visibility: Annotated[str, _words(Visibility)]


def agent_entry_json(entry: agent_values.AgentEntry) -> AgentEntry:
    return {
        "key": entry.key,
        "content": entry.content,
        "kind": entry.kind,
        "sources": [{"session": s.session, "item": s.item} for s in entry.sources],
        "updatedAt": entry.updated_at,
        "status": entry.status,
        "about": entry.about,
        "visibility": entry.visibility,
    }


class AgentMemory(TypedDict):
    """A10: an agent's memory as the caller may see it, and its version."""

    entries: dict[str, AgentEntry]
    version: int


def agent_memory_json(memory: agent_values.AgentMemory) -> AgentMemory:
    return {
        "entries": {key: agent_entry_json(entry) for key, entry in memory.entries.items()},
        "version": memory.version,
    }


class Promoted(TypedDict):
    """A12: the new agent and its memory."""

    agent: Agent
    memory: AgentMemory


class LogEntry(TypedDict):
    """A11: one version of an agent's memory: when, what made it, the keys the caller sees."""

    version: int
    at: int
    maker: Annotated[str, _words(Maker)]
    person: str | None
    keys: list[str]


def log_entry_json(entry: agent_values.LogEntry) -> LogEntry:
    return {
        "version": entry.version,
        "at": entry.at,
        "maker": entry.maker,
        "person": entry.person,
        "keys": list(entry.keys),
    }


class AgentLog(TypedDict):
    changes: list[LogEntry]


class SessionHitEntry(Entry):
    session: str | None


class AgentHitEntry(AgentEntry):
    agent: str


class Hit(TypedDict):
    """One search hit: a session entry (with its session) or an agent entry (with its agent),
    the key the caller's view lists it under (`key@person` for a private agent entry, as the
    agent memory's `entries` map), its score and a snippet with the matched words marked."""

    entry: SessionHitEntry | AgentHitEntry
    listedAs: str
    score: float
    snippet: str


def hit_json(hit: search.Hit) -> Hit:
    entry: SessionHitEntry | AgentHitEntry
    if hit.entry is not None:
        entry = {**entry_json(hit.entry), "session": hit.session}
    else:
        assert hit.agent_entry is not None
        entry = {**agent_entry_json(hit.agent_entry), "agent": hit.agent}
    return {"entry": entry, "listedAs": hit.listed_as, "score": hit.score, "snippet": hit.snippet}


class Hits(TypedDict):
    hits: list[Hit]


def search_json(page: search.SearchPage) -> Hits:
    return {"hits": [hit_json(hit) for hit in page.hits]}


class Before(TypedDict):
    content: str | None
    kind: str | None
    status: str | None


class Change(TypedDict):
    """One change of a fact's story: before and after, what made it, when, the items it
    cites."""

    id: str
    op: str
    maker: str
    madeBy: str | None
    key: str
    content: str | None
    kind: str | None
    status: str | None
    before: Before
    at: int
    revision: int | None
    head: str | None
    session: str | None
    run: str | None
    model: str | None
    cites: list[Item]


def change_json(change: values.Change) -> Change:
    return {
        "id": change.id,
        "op": change.op,
        "maker": change.maker,
        "madeBy": change.made_by,
        "key": change.key,
        "content": change.content,
        "kind": change.kind,
        "status": change.status,
        "before": {
            "content": change.before_content,
            "kind": change.before_kind,
            "status": change.before_status,
        },
        "at": change.at,
        "revision": change.revision,
        "head": change.head,
        "session": change.session,
        "run": change.run,
        "model": change.model,
        "cites": [item_json(item) for item in change.cites],
    }
