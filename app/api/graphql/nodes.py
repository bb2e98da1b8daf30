"""The graph's node types: sessions, their memory and timeline, runs, agents, and the
provenance that links them.

They reach each other in circles (a session's agent has sessions, an item's turn has a
session, an entry's story cites items), so they live in this one module. Each is thin: its
fields, built from a domain value by `from_domain` (or, for `Item`, the domain value itself),
and resolvers that hand the context and ids to the per-noun `resolvers` modules, which answer
domain values, never these types. The
per-noun packages hold the leaf types, mutations and root fields, and import this module;
this module imports only their `types` and `resolvers`.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping
from functools import partial

import strawberry

from app.api.graphql.agents import resolvers as agents
from app.api.graphql.agents.resolvers import AGENT_CHANGES, AGENT_ENTRIES, JOBS, LOG
from app.api.graphql.agents.types import AgentLogEntry, LearnedDrop
from app.api.graphql.connections import (
    Connection,
    Page,
    connection,
    keyed_page,
    page_of,
)
from app.api.graphql.context import Context, GraphInfo
from app.api.graphql.enums import (
    ChangeOp,
    EntryStatus,
    JobStatus,
    Kind,
    Maker,
    SessionKind,
    TurnStatus,
    Visibility,
)
from app.api.graphql.execution import NOT_READ, NotRead, in_place
from app.api.graphql.items import resolvers as items
from app.api.graphql.items.resolvers import ITEMS, TURNS
from app.api.graphql.provenance import resolvers as provenance
from app.api.graphql.provenance.types import Entries
from app.api.graphql.runs import resolvers as runs
from app.api.graphql.runs.resolvers import RUNS
from app.api.graphql.runs.types import DroppedChange
from app.api.graphql.scalars import EpochMillis
from app.api.graphql.selections import asked, asks
from app.api.graphql.sessions import resolvers as sessions
from app.api.graphql.sessions.resolvers import (
    CHANGES,
    ENTRIES,
    SESSIONS,
    SOURCE_TURNS,
    VERSIONS,
)
from app.api.graphql.sessions.types import Instructions, Overrides, Switches
from app.domain import agents as agent_values
from app.domain import history as history_values
from app.domain import items as timeline
from app.domain import jobs as domain_jobs
from app.domain import provenance as provenance_values
from app.domain import sessions as values
from app.domain.agents import Agent as AgentValue
from app.domain.history import Version
from app.domain.made import made
from app.domain.turns import Turn as RecordedTurn
from app.memory.changes.commands import check_key
from app.memory.paging import DEFAULT_PAGE


def _turn_read_ahead(item: timeline.Item, context: Context) -> Turn | NotRead | None:
    """An item's turn where it needs no read: none for an item that came in no turn (a memory
    edit's), else the turn `read_turns_ahead` read for this request; NOT_READ otherwise."""
    if not item.turn_known:
        return NOT_READ
    if item.turn is None:
        return None
    found: Turn | NotRead | None = context.turns_read.get(item.turn, NOT_READ)
    return found


@in_place(_turn_read_ahead)  # read ahead, a list of items completes in place (execution)
async def _item_turn(root: timeline.Item, info: GraphInfo) -> Turn | None:
    ahead = _turn_read_ahead(root, info.context)
    if not isinstance(ahead, NotRead):
        return ahead
    return Turn.maybe(await items.turn_of(info.context, root.uid, root.turn, root.turn_known))


async def _item_supports(root: timeline.Item, info: GraphInfo) -> Entries:
    return Entries.from_domain(await provenance.supports(info.context, root.uid))


@strawberry.type
class Item:
    """One entry of a session's timeline.

    The GraphQL type only: its values are the domain's items (`app.domain.items.Item`) as they
    are, whose attributes are its fields, so that a view's thousand items are served without a
    copy each. A field that holds items says so with `graphql_type=list[Item]`."""

    id: str
    type: str
    role: str | None
    content: str | None
    app: str | None
    author: str | None
    at: EpochMillis
    seq: int
    supports: Entries = strawberry.field(
        resolver=_item_supports,
        description="Every session and agent entry change that cites this item, across forks, "
        "newest first (one statement per request).",
    )
    turn: Turn | None = strawberry.field(
        resolver=_item_turn, description="The turn the item came in (none for a memory edit)."
    )


async def read_turns_ahead(info: GraphInfo, of: Iterable[timeline.Item]) -> None:
    """Read the turns of the items `of` in one batch, for this request, so that a list of
    items answers `turn` without one await per item. Items whose turn is not known yet are
    left to look it up themselves."""
    read = info.context.turns_read
    ids = list({
        item.turn for item in of
        if item.turn_known and item.turn is not None and item.turn not in read
    })
    rows = await items.turns_ahead(info.context, ids) if ids else {}
    if rows is not None:
        read.update((i, Turn.maybe(row)) for i, row in rows.items())


@strawberry.type
class Turn:
    """One model step of a session, with the memory keys it was shown (S5)."""

    id: str
    status: TurnStatus
    model: str | None
    shown_keys: list[str] = strawberry.field(description="The session memory keys it was shown.")
    shown_agent: list[str] = strawberry.field(description="The agent memory keys it was shown.")
    @strawberry.field
    async def item_ids(self, info: GraphInfo) -> list[str]:
        return [item.id for item in await info.context.turn_items.load(self.id)]

    @strawberry.field(graphql_type=list[Item])
    async def items(self, info: GraphInfo) -> list[timeline.Item]:
        return await info.context.turn_items.load(self.id)

    at: EpochMillis
    completed_at: EpochMillis | None
    session_id: strawberry.Private[str]

    @classmethod
    def maybe(cls, turn: RecordedTurn | None) -> Turn | None:
        if turn is None:
            return None
        return made(cls, {
            "id": turn.id, "status": turn.status, "model": turn.model,
            "shown_keys": list(turn.shown), "shown_agent": list(turn.shown_agent),
            "at": turn.at, "completed_at": turn.completed_at, "session_id": turn.session,
        })

    @strawberry.field
    async def session(self, info: GraphInfo) -> Session | None:
        return Session.maybe(await info.context.sessions.load(self.session_id))

    @strawberry.field(
        description="The session and agent entries the turn was given, as they then stood "
        "(S5, A8; one statement per request)."
    )
    async def shown(self, info: GraphInfo) -> Entries:
        return Entries.from_domain(await provenance.shown(info.context, self.id))


async def items_connection(
    info: GraphInfo, version: str, page: Page
) -> Connection[timeline.Item]:
    found = await items.items(info.context, version, page)
    return connection(ITEMS, page, found, lambda i: (i.seq,), lambda i: i)


@strawberry.type
class Change:
    """A recorded memory change: before and after, what made it, the items it cites."""

    id: str
    op: ChangeOp
    maker: Maker
    made_by: str | None = strawberry.field(description="the person or run that made it")
    key: str
    content: str | None
    kind: Kind | None
    status: EntryStatus | None
    before_content: str | None
    before_kind: Kind | None
    before_status: EntryStatus | None
    at: EpochMillis
    revision: int | None
    head: str | None
    model: str | None
    cites: list[timeline.Item] = strawberry.field(graphql_type=list[Item])
    session_id: strawberry.Private[str | None]
    run_id: strawberry.Private[str | None]

    @classmethod
    def from_domain(cls, change: history_values.Change) -> Change:
        return cls(
            id=change.id,
            op=change.op,
            maker=change.maker,
            made_by=change.made_by,
            key=change.key,
            content=change.content,
            kind=change.kind,
            status=change.status,
            before_content=change.before_content,
            before_kind=change.before_kind,
            before_status=change.before_status,
            at=EpochMillis(change.at),
            revision=change.revision,
            head=change.head,
            model=change.model,
            cites=list(change.cites),
            session_id=change.session,
            run_id=change.run,
        )

    @strawberry.field(description="The consolidation run that made it, if one did.")
    async def run(self, info: GraphInfo) -> Run | None:
        if self.run_id is None:
            return None
        return Run.maybe(await info.context.runs.load(self.run_id))

    @strawberry.field
    async def session(self, info: GraphInfo) -> Session | None:
        if self.session_id is None:
            return None
        return Session.maybe(await info.context.sessions.load(self.session_id))


@strawberry.type
class Entry:
    """S1: one fact under one key."""

    key: str
    content: str
    kind: Kind
    status: EntryStatus
    updated_at: EpochMillis
    sources: list[timeline.Item] = strawberry.field(graphql_type=list[Item])
    change_id: strawberry.Private[str]

    @classmethod
    def from_domain(cls, entry: values.Entry) -> Entry:
        return made(cls, {
            "key": entry.key, "content": entry.content, "kind": entry.kind,
            "status": entry.status, "updated_at": entry.updated_at,
            "sources": list(entry.items()),
            "change_id": entry.change,
        })

    @strawberry.field(
        description="The entry's story, newest change first: what made each change (a person, "
        "a run with its model and turn, a fork, a promotion), before and after, the items cited "
        "with their turns and sessions, through forks on into the entry it was copied from "
        "(one statement per request)."
    )
    async def story(self, info: GraphInfo) -> list[StoryStep]:
        steps = await provenance.story(info.context, self.change_id)
        return [StoryStep.from_domain(step) for step in steps]

    @strawberry.field(
        description="The entry's changes, newest first, following each change to the one it "
        "replaced (through forks on into the entry it was copied from)."
    )
    async def changes(
        self, info: GraphInfo, first: int = DEFAULT_PAGE, after: str | None = None
    ) -> Connection[Change]:
        page = page_of(CHANGES, first, after)
        found = await sessions.changes(info.context, self.change_id, page)
        return connection(CHANGES, page, found, lambda c: (c.id,), Change.from_domain)


async def entries_connection(
    info: GraphInfo, by_key: Mapping[str, Entry], first: int, after: str | None, parent: str
) -> Connection[Entry]:
    """A page of the entries of a session's memory or a version's (`parent`), by key (the view
    is read whole, so it is paged by `keyed_page`; its total is known)."""
    page = page_of(ENTRIES, first, after, parent)
    rows = keyed_page(by_key, page)
    found = connection(ENTRIES, page, rows, lambda kv: (kv[0],), lambda kv: kv[1], len(by_key))
    if any(asks(asked(info), ("entries", *path)) for path in SOURCE_TURNS):
        await read_turns_ahead(info, (item for entry in found.nodes for item in entry.sources))
    return found


class BuiltEntries:
    """The Entry nodes built for each memory view, while that view lives: a domain view never
    changes once read, and a kept view answers the same entries on each use
    (app/memory/sessions/kept.py), so the nodes built for it once serve every read of it, as
    long as it is kept; a view read once (after a change, or by a process that keeps none) takes
    its nodes with it when its request ends. A node holds nothing of one request (an item's
    turn read ahead is the request's: `read_turns_ahead`). Only entries a weak reference can
    follow (`values.Entries`, as every view read has) are remembered."""

    def __init__(self) -> None:
        self.built: dict[int, tuple[weakref.ref[Mapping[str, values.Entry]], dict[str, Entry]]] = {}

    def nodes(self, entries: Mapping[str, values.Entry]) -> dict[str, Entry]:
        key = id(entries)
        hit = self.built.get(key)
        if hit is not None and hit[0]() is entries:
            return hit[1]
        nodes = {k: Entry.from_domain(entry) for k, entry in entries.items()}
        if isinstance(entries, values.Entries):
            self.built[key] = (weakref.ref(entries, partial(self._gone, key)), nodes)
        return nodes

    def _gone(self, key: int, ref: weakref.ref[Mapping[str, values.Entry]]) -> None:
        hit = self.built.get(key)
        if hit is not None and hit[0] is ref:
            del self.built[key]


BUILT = BuiltEntries()


@strawberry.type
class Memory:
    """S2: a session's memory view."""

    processed: list[str]
    settings: Switches
    overrides: Overrides
    by_key: strawberry.Private[dict[str, Entry]]
    session_id: strawberry.Private[str]

    @classmethod
    def from_domain(cls, session_id: str, memory: values.Memory) -> Memory:
        return cls(
            by_key=BUILT.nodes(memory.entries),
            session_id=session_id,
            processed=list(memory.processed),
            settings=Switches(use=memory.settings.use, generate=memory.settings.generate),
            overrides=Overrides(use=memory.overrides.use, generate=memory.overrides.generate),
        )

    @strawberry.field(description="S2: the entries, retracted ones too, by key.")
    async def entries(
        self, info: GraphInfo, first: int = DEFAULT_PAGE, after: str | None = None
    ) -> Connection[Entry]:
        return await entries_connection(info, self.by_key, first, after, self.session_id)

    @strawberry.field
    def entry(self, key: str) -> Entry | None:
        return self.by_key.get(check_key(key))  # as a write names it


@strawberry.type(name="Version")
class SessionVersion:
    """A head the session had: when, what made it, and (on request) everything as it was."""

    id: str
    cause: str = strawberry.field(
        description="start, turn, remember, forget, consolidation, fork or revert"
    )
    at: EpochMillis
    parent: str | None
    reverted_from: str | None
    added: list[str] = strawberry.field(description="The ids of the items it added.")
    current: bool
    depth: strawberry.Private[int]
    # whose history it is read through: its items and entries are that session's lists, in
    # which a cursor of the session's own items or entries names the same place
    session_id: strawberry.Private[str]

    @classmethod
    def from_domain(cls, version: Version, session_id: str) -> SessionVersion:
        return cls(
            session_id=session_id,
            id=version.id,
            cause=version.cause,
            at=EpochMillis(version.at),
            parent=version.parent,
            reverted_from=version.reverted_from,
            added=list(version.added),
            current=version.current,
            depth=version.depth,
        )

    @strawberry.field(description="The memory entries as they were at this version, by key.")
    async def entries(
        self, info: GraphInfo, first: int = DEFAULT_PAGE, after: str | None = None
    ) -> Connection[Entry]:
        found = await sessions.memory_at(info.context, self.id)
        by_key = {e.key: Entry.from_domain(e) for e in found.entries}
        return await entries_connection(info, by_key, first, after, self.session_id)

    @strawberry.field(
        description="The ids of the items consolidation had processed at this version."
    )
    async def processed(self, info: GraphInfo) -> list[str]:
        return list((await sessions.memory_at(info.context, self.id)).processed)

    @strawberry.field(
        description="The timeline as it was at this version, oldest first.",
        graphql_type=Connection[Item],
    )
    async def items(
        self, info: GraphInfo, first: int = DEFAULT_PAGE, after: str | None = None
    ) -> Connection[timeline.Item]:
        return await items_connection(
            info, self.id, page_of(ITEMS, first, after, self.session_id)
        )


@strawberry.type
class Session:
    """One conversation of an agent with a person, with its memory."""

    id: str
    kind: SessionKind
    head: str
    revision: int
    person: str | None
    model: str | None
    created_at: EpochMillis
    memory: Memory
    agent_id: strawberry.Private[str]
    parent_id: strawberry.Private[str | None]
    forked_from_id: strawberry.Private[str | None]
    forked_at: str | None

    @classmethod
    def from_domain(cls, view: values.SessionView) -> Session:
        s = view.session
        return cls(
            id=s.id,
            kind=s.kind,
            head=s.head,
            revision=s.revision,
            person=s.person,
            model=s.model,
            created_at=EpochMillis(s.created_at),
            memory=Memory.from_domain(view.session.id, view.memory),
            agent_id=s.agent,
            parent_id=s.parent,
            forked_from_id=s.forked_from,
            forked_at=s.forked_at,
        )

    @classmethod
    def maybe(cls, view: values.SessionView | None) -> Session | None:
        return None if view is None else cls.from_domain(view)

    @strawberry.field
    async def agent(self, info: GraphInfo) -> Agent | None:
        return Agent.maybe(await info.context.agents.load(self.agent_id))

    @strawberry.field
    async def parent(self, info: GraphInfo) -> Session | None:
        if self.parent_id is None:
            return None
        return Session.maybe(await info.context.sessions.load(self.parent_id))

    @strawberry.field
    async def forked_from(self, info: GraphInfo) -> Session | None:
        if self.forked_from_id is None:
            return None
        return Session.maybe(await info.context.sessions.load(self.forked_from_id))

    @strawberry.field(description="Consolidation runs, newest first.")
    async def runs(
        self, info: GraphInfo, first: int = DEFAULT_PAGE, after: str | None = None
    ) -> Connection[Run]:
        page = page_of(RUNS, first, after, self.id)
        rows = await runs.runs(info.context, self.id, page)
        found = [run for run in map(Run.maybe, rows) if run]
        return connection(RUNS, page, found, lambda r: (r.queued_at, r.id), lambda r: r)

    @strawberry.field(
        description="The turns recorded in the session, on any branch, oldest first."
    )
    async def turns(
        self, info: GraphInfo, first: int = DEFAULT_PAGE, after: str | None = None
    ) -> Connection[Turn]:
        page = page_of(TURNS, first, after, self.id)
        found = [t for t in map(Turn.maybe, await items.turns(info.context, self.id, page)) if t]
        return connection(TURNS, page, found, lambda t: (t.at, t.id), lambda t: t)

    @strawberry.field(description="Every head the session ever had, oldest first.")
    async def versions(
        self, info: GraphInfo, first: int = DEFAULT_PAGE, after: str | None = None
    ) -> Connection[SessionVersion]:
        page = page_of(VERSIONS, first, after, self.id)
        found = await sessions.versions(info.context, self.id, page)
        return connection(
            VERSIONS, page, found, lambda v: (v.at, v.depth, v.id),
            lambda v: SessionVersion.from_domain(v, self.id),
        )

    @strawberry.field(description="S5, S6, A8: the memory text a turn would get now.")
    async def instructions(self, info: GraphInfo) -> Instructions:
        shown = await sessions.instructions(info.context, self.id)
        return Instructions(
            memory=shown.text, session_keys=list(shown.keys), agent_keys=list(shown.agent_keys)
        )

    @strawberry.field(
        description="The timeline up to the head, oldest first.", graphql_type=Connection[Item]
    )
    async def items(
        self, info: GraphInfo, first: int = DEFAULT_PAGE, after: str | None = None
    ) -> Connection[timeline.Item]:
        return await items_connection(info, self.head, page_of(ITEMS, first, after, self.id))


async def sessions_connection(info: GraphInfo, page: Page, ids: list[str]) -> Connection[Session]:
    """A page of sessions from the ids a keyset read found (at most `first + 1`)."""
    found = [Session.from_domain(view) for view in await sessions.views(info.context, ids)]
    return connection(SESSIONS, page, found, lambda s: (s.created_at, s.id), lambda s: s)


@strawberry.type
class Run:
    """One consolidation: what it read, the model, the changes it kept and dropped, its error."""

    id: str
    status: JobStatus
    model: str | None
    trigger: str
    error: str | None
    queued_at: EpochMillis
    started_at: EpochMillis | None = strawberry.field(
        description="When a worker last began it; null while it is queued."
    )
    finished_at: EpochMillis | None
    attempts: int
    head: str | None = strawberry.field(
        description="The session's version it ended at: the one its changes made, or the head "
        "it read where it kept none; null unless it succeeded."
    )
    read: list[str] = strawberry.field(description="The ids of the items it read.")
    tried: list[str] = strawberry.field(
        description="The ids of the items a failed run tried to read (they stay unprocessed)."
    )
    dropped: list[DroppedChange]
    kept_ids: strawberry.Private[list[str]]
    turn_id: strawberry.Private[str | None]

    @classmethod
    def maybe(cls, run: domain_jobs.Run | None) -> Run | None:
        if run is None:
            return None
        finished = run.finished_at
        return cls(
            id=run.id,
            status=run.status,
            model=run.model,
            trigger=run.trigger or "turn",
            error=run.error,
            queued_at=EpochMillis(run.queued_at),
            started_at=None if run.started_at is None else EpochMillis(run.started_at),
            finished_at=None if finished is None else EpochMillis(finished),
            attempts=run.attempts or 0,
            head=run.head,
            read=list(run.read),
            tried=list(run.tried),
            dropped=[DroppedChange(op=d.op, key=d.key, reason=d.reason, proposal=d.proposal)
                     for d in run.dropped],
            kept_ids=list(run.kept),
            turn_id=run.turn,
        )

    @strawberry.field(description="The changes it applied.")
    async def changes(self, info: GraphInfo) -> list[Change]:
        return [Change.from_domain(c) for c in await runs.kept(info.context, self.kept_ids)]

    @strawberry.field
    async def turn(self, info: GraphInfo) -> Turn | None:
        if self.turn_id is None:
            return None
        return Turn.maybe(await info.context.turns.load(self.turn_id))


@strawberry.type
class AgentSource:
    """A3: an item of a session that supports an agent entry (only those of sessions the caller
    may reach are listed)."""

    session_id: strawberry.Private[str]
    uid: strawberry.Private[str]

    @strawberry.field
    async def session(self, info: GraphInfo) -> Session | None:
        return Session.maybe(await info.context.sessions.load(self.session_id))

    @strawberry.field(graphql_type=Item | None)
    async def item(self, info: GraphInfo) -> timeline.Item | None:
        return await info.context.item.load(self.uid)


def _sources(sources: tuple[agent_values.Source, ...]) -> list[AgentSource]:
    return [AgentSource(session_id=s.session, uid=s.uid) for s in sources]


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
    def maybe(cls, job: domain_jobs.LearningJob | None) -> LearningJob | None:
        if job is None:
            return None
        finished, started = job.finished_at, job.started_at
        return cls(
            id=job.id,
            status=job.status,
            model=job.model,
            error=job.error,
            queued_at=EpochMillis(job.queued_at),
            started_at=None if started is None else EpochMillis(started),
            finished_at=None if finished is None else EpochMillis(finished),
            attempts=job.attempts or 0,
            read=list(job.read),
            tried=list(job.tried),
            sessions=list(job.sessions),
            dropped=[LearnedDrop(op=d.op, key=d.key, reason=d.reason, proposal=d.proposal,
                                 session=d.session)
                     for d in job.dropped],
            kept_ids=list(job.kept),
        )

    @strawberry.field(description="The agent memory changes it made.")
    async def changes(self, info: GraphInfo) -> list[AgentChange]:
        kept = await agents.kept(info.context, self.kept_ids)
        return [AgentChange.from_domain(change) for change in kept]


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
    listed_as: str = strawberry.field(
        description="the entry it changed, by the name the memory lists it under: its key, or "
        "key@person for a private entry"
    )
    at: EpochMillis
    job_id: strawberry.Private[str | None]
    sources: list[AgentSource]

    @strawberry.field(description="The learning job that made it, if one did.")
    async def job(self, info: GraphInfo) -> LearningJob | None:
        if self.job_id is None:
            return None
        return LearningJob.maybe(await info.context.jobs.load(self.job_id))

    @classmethod
    def from_domain(cls, change: agent_values.AgentChange) -> AgentChange:
        return cls(
            id=change.id,
            version=change.version,
            op=change.op,
            maker=change.maker,
            person=change.person,
            key=change.key,
            before=change.before_content,
            content=change.content,
            kind=change.kind,
            status=change.status,
            about=change.about,
            visibility=change.visibility,
            listed_as=change.name,
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
    listed_as: str = strawberry.field(
        description="the name the memory lists it under: its key, or key@person for a private "
        "entry (a private entry and the shared one of its key are two entries)"
    )
    updated_at: EpochMillis
    sources: list[AgentSource]
    change_id: strawberry.Private[str]

    @classmethod
    def from_domain(cls, entry: agent_values.AgentEntry) -> AgentEntry:
        return cls(
            key=entry.key,
            content=entry.content,
            kind=entry.kind,
            status=entry.status,
            about=entry.about,
            visibility=entry.visibility,
            listed_as=entry.name,
            updated_at=EpochMillis(entry.updated_at),
            sources=_sources(entry.sources),
            change_id=entry.change,
        )

    @strawberry.field(description="The entry's changes, newest first.")
    async def changes(
        self, info: GraphInfo, first: int = DEFAULT_PAGE, after: str | None = None
    ) -> Connection[AgentChange]:
        page = page_of(AGENT_CHANGES, first, after)
        found = await agents.changes(info.context, self.change_id, page)
        return connection(AGENT_CHANGES, page, found, lambda c: (c.id,), AgentChange.from_domain)


@strawberry.type
class AgentMemory:
    """A10: an agent's memory as the caller may see it, and its version."""

    version: int
    agent_id: strawberry.Private[str]
    by_key: strawberry.Private[dict[str, AgentEntry]]

    @classmethod
    def from_domain(cls, agent_id: str, memory: agent_values.AgentMemory) -> AgentMemory:
        return cls(
            version=memory.version,
            agent_id=agent_id,
            by_key={key: AgentEntry.from_domain(e) for key, e in memory.entries.items()},
        )

    @strawberry.field(
        description="The entries the caller may see, by the name each is listed under (its key, "
        "or key@person for a private entry, beside the shared one of its key)."
    )
    def entries(
        self, first: int = DEFAULT_PAGE, after: str | None = None
    ) -> Connection[AgentEntry]:
        page = page_of(AGENT_ENTRIES, first, after, self.agent_id)
        rows = keyed_page(self.by_key, page)
        return connection(
            AGENT_ENTRIES, page, rows, lambda kv: (kv[0],), lambda kv: kv[1], len(self.by_key)
        )

    @strawberry.field(description="A11: the versions of the memory, oldest first.")
    async def log(
        self, info: GraphInfo, first: int = DEFAULT_PAGE, after: str | None = None
    ) -> Connection[AgentLogEntry]:
        page = page_of(LOG, first, after, self.agent_id)
        found = await agents.log(info.context, self.agent_id, page)
        return connection(LOG, page, found, lambda e: (e.version,), AgentLogEntry.from_domain)


@strawberry.type
class Agent:
    """A configured assistant of an org."""

    id: str
    name: str
    shared: bool
    model: str | None
    created_at: strawberry.Private[int]

    @classmethod
    def from_domain(cls, agent: AgentValue) -> Agent:
        return cls(
            id=agent.id, name=agent.name, shared=agent.shared, model=agent.model,
            created_at=agent.created_at,
        )

    @classmethod
    def maybe(cls, agent: AgentValue | None) -> Agent | None:
        return None if agent is None else cls.from_domain(agent)

    @strawberry.field(description="The agent's sessions the caller may reach, oldest first.")
    async def sessions(
        self, info: GraphInfo, first: int = DEFAULT_PAGE, after: str | None = None
    ) -> Connection[Session]:
        page = page_of(SESSIONS, first, after, self.id)
        ids = await agents.session_ids(info.context, self.id, page)
        return await sessions_connection(info, page, ids)

    @strawberry.field(description="A2: the agent's learning jobs, newest first.")
    async def learning_jobs(
        self, info: GraphInfo, first: int = DEFAULT_PAGE, after: str | None = None
    ) -> Connection[LearningJob]:
        page = page_of(JOBS, first, after, self.id)
        rows = await agents.jobs(info.context, self.id, page)
        found = [job for job in map(LearningJob.maybe, rows) if job]
        return connection(JOBS, page, found, lambda j: (j.queued_at, j.id), lambda j: j)

    @strawberry.field(description="A10: the agent's lasting memory, as the caller may see it.")
    async def memory(self, info: GraphInfo) -> AgentMemory:
        return AgentMemory.from_domain(self.id, await agents.memory(info.context, self.id))


@strawberry.type
class CitedItem:
    """An item a change cites, the turn it came in, and that turn's session."""

    turn_id: str | None
    session_id: str | None
    record: strawberry.Private[provenance_values.Cited]

    @strawberry.field(graphql_type=Item)
    def item(self) -> timeline.Item:
        return self.record.item


@strawberry.type
class StoryStep:
    """One change of an entry's story, newest first, and what made it."""

    maker: Maker
    person: str | None = strawberry.field(description="the person who made it, if one did")
    run_id: str | None = strawberry.field(description="the consolidation run that made it")
    run_model: str | None
    run_turn_id: str | None = strawberry.field(description="the turn whose run made it")
    copied: bool = strawberry.field(description="a fork's copy of the change it REPLACES")
    before: str | None
    content: str | None
    cites: list[CitedItem]
    step: strawberry.Private[provenance_values.StoryStep]

    @classmethod
    def from_domain(cls, step: provenance_values.StoryStep) -> StoryStep:
        return cls(
            maker=step.change.maker,
            person=step.person,
            run_id=step.run,
            run_model=step.run_model,
            run_turn_id=step.run_turn,
            copied=step.change.op == "copy",
            before=step.change.before_content,
            content=step.change.content,
            cites=[CitedItem(turn_id=c.turn, session_id=c.session, record=c) for c in step.cites],
            step=step,
        )

    @strawberry.field(description="The change itself: op, key, kind, status, when, where.")
    def change(self) -> Change:
        return Change.from_domain(self.step.change)
