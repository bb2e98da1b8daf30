"""Sessions and their memory: entries, the changes behind them, and the session mutations."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated

import strawberry

from app.api.graphql.connections import (
    DEFAULT_FIRST,
    Connection,
    Keyset,
    connection,
    keyed_page,
    page_of,
)
from app.api.graphql.context import GraphInfo
from app.api.graphql.enums import (
    ChangeOp,
    EntryStatus,
    Kind,
    Maker,
    SessionKind,
    enum,
    maybe,
)
from app.api.graphql.runs import Run
from app.api.graphql.scalars import EpochMillis
from app.api.graphql.timeline import (
    ITEMS,
    Item,
    SessionVersion,
    Turn,
    asks,
    items_of,
    read_turns_ahead,
)
from app.domain import sessions as values
from app.memory.sessions import commands

if TYPE_CHECKING:
    from app.api.graphql.agents import Agent
    from app.api.graphql.provenance import StoryStep

ENTRIES = Keyset("entries", (str,))
CHANGES = Keyset("changes", (str,))
RUNS = Keyset("runs", (int, str))
TURNS = Keyset("turns", (int, str))
VERSIONS = Keyset("versions", (int, int, str))


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
    cites: list[Annotated[Item, strawberry.lazy("app.api.graphql.timeline")]]
    session_id: strawberry.Private[str | None]
    run_id: strawberry.Private[str | None]

    @classmethod
    def from_domain(cls, change: values.Change) -> Change:
        return cls(
            id=change.id,
            op=enum(ChangeOp, change.op),
            maker=enum(Maker, change.maker),
            made_by=change.made_by,
            key=change.key,
            content=change.content,
            kind=maybe(Kind, change.kind),
            status=maybe(EntryStatus, change.status),
            before_content=change.before_content,
            before_kind=maybe(Kind, change.before_kind),
            before_status=maybe(EntryStatus, change.before_status),
            at=EpochMillis(change.at),
            revision=change.revision,
            head=change.head,
            model=change.model,
            cites=[Item.from_domain(item) for item in change.cites],
            session_id=change.session,
            run_id=change.run,
        )

    @strawberry.field(description="The consolidation run that made it, if one did.")
    async def run(
        self, info: GraphInfo
    ) -> Annotated[Run, strawberry.lazy("app.api.graphql.runs")] | None:
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
    sources: list[Annotated[Item, strawberry.lazy("app.api.graphql.timeline")]]
    change_id: strawberry.Private[str]

    @classmethod
    def from_domain(cls, entry: values.Entry) -> Entry:
        return cls(
            key=entry.key,
            content=entry.content,
            kind=enum(Kind, entry.kind),
            status=enum(EntryStatus, entry.status),
            updated_at=EpochMillis(entry.updated_at),
            sources=[Item.from_domain(item) for item in entry.items()],
            change_id=entry.change,
        )

    @strawberry.field(
        description="The entry's story, newest change first: what made each change (a person, "
        "a run with its model and turn, a fork, a promotion), before and after, the items cited "
        "with their turns and sessions, through forks on into the entry it was copied from "
        "(one statement per request)."
    )
    async def story(
        self, info: GraphInfo
    ) -> list[Annotated[StoryStep, strawberry.lazy("app.api.graphql.provenance")]]:
        from app.api.graphql.provenance import story_of

        return await story_of(info, self.change_id)

    @strawberry.field(
        description="The entry's changes, newest first, following each change to the one it "
        "replaced (through forks on into the entry it was copied from)."
    )
    async def changes(
        self, info: GraphInfo, first: int = DEFAULT_FIRST, after: str | None = None
    ) -> Connection[Change]:
        page = page_of(CHANGES, first, after)
        found = await info.context.page("changes", page.after_part(), first).load(self.change_id)
        return connection(CHANGES, page, found, lambda c: (c.id,), Change.from_domain)


# Where a page of entries asks for its sources' turns, read them ahead in one batch.
SOURCE_TURNS = (("nodes", "sources", "turn"), ("edges", "node", "sources", "turn"))


async def entries_connection(
    info: GraphInfo, by_key: Mapping[str, Entry], first: int, after: str | None
) -> Connection[Entry]:
    """A page of a session memory's entries, by key (the view is read whole, so it is paged by
    `keyed_page`; its total is known)."""
    page = page_of(ENTRIES, first, after)
    rows = keyed_page(by_key, page)
    found = connection(ENTRIES, page, rows, lambda kv: (kv[0],), lambda kv: kv[1], len(by_key))
    if any(asks(info.selected_fields, ("entries", *path)) for path in SOURCE_TURNS):
        await read_turns_ahead(info, (item for entry in found.nodes for item in entry.sources))
    return found


@strawberry.type
class Switches:
    use: bool
    generate: bool


@strawberry.type
class Overrides:
    use: bool | None
    generate: bool | None


@strawberry.type
class Memory:
    """S2: a session's memory view."""

    processed: list[str]
    settings: Switches
    overrides: Overrides
    by_key: strawberry.Private[dict[str, Entry]]

    @classmethod
    def from_domain(cls, memory: values.Memory) -> Memory:
        return cls(
            by_key={key: Entry.from_domain(entry) for key, entry in memory.entries.items()},
            processed=list(memory.processed),
            settings=Switches(use=memory.settings.use, generate=memory.settings.generate),
            overrides=Overrides(use=memory.overrides.use, generate=memory.overrides.generate),
        )

    @strawberry.field(description="S2: the entries, retracted ones too, by key.")
    async def entries(
        self, info: GraphInfo, first: int = DEFAULT_FIRST, after: str | None = None
    ) -> Connection[Entry]:
        return await entries_connection(info, self.by_key, first, after)

    @strawberry.field
    def entry(self, key: str) -> Entry | None:
        return self.by_key.get(key)


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
            kind=enum(SessionKind, s.kind),
            head=s.head,
            revision=s.revision,
            person=s.person,
            model=s.model,
            created_at=EpochMillis(s.created_at),
            memory=Memory.from_domain(view.memory),
            agent_id=s.agent,
            parent_id=s.parent,
            forked_from_id=s.forked_from,
            forked_at=s.forked_at,
        )

    @classmethod
    def maybe(cls, view: values.SessionView | None) -> Session | None:
        return None if view is None else cls.from_domain(view)

    @strawberry.field
    async def agent(
        self, info: GraphInfo
    ) -> Annotated[Agent, strawberry.lazy("app.api.graphql.agents")] | None:
        from app.api.graphql.agents import Agent

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
        self, info: GraphInfo, first: int = DEFAULT_FIRST, after: str | None = None
    ) -> Connection[Run]:
        page = page_of(RUNS, first, after)
        ids = await info.context.page("runs", page.after, first).load(self.id)
        runs = [run for run in map(Run.maybe, await info.context.runs.load_many(ids)) if run]
        return connection(RUNS, page, runs, lambda r: (r.queued_at, r.id), lambda r: r)

    @strawberry.field(
        description="The turns recorded in the session, on any branch, oldest first."
    )
    async def turns(
        self, info: GraphInfo, first: int = DEFAULT_FIRST, after: str | None = None
    ) -> Connection[Turn]:
        page = page_of(TURNS, first, after)
        ids = await info.context.page("turns", page.after, first).load(self.id)
        turns = [t for t in map(Turn.maybe, await info.context.turns.load_many(ids)) if t]
        return connection(TURNS, page, turns, lambda t: (t.at, t.id), lambda t: t)

    @strawberry.field(description="Every head the session ever had, oldest first.")
    async def versions(
        self, info: GraphInfo, first: int = DEFAULT_FIRST, after: str | None = None
    ) -> Connection[SessionVersion]:
        page = page_of(VERSIONS, first, after)
        found = await info.context.page("versions", page.after, first).load(self.id)
        return connection(
            VERSIONS, page, found, lambda v: (v.at, v.depth, v.id), SessionVersion.from_domain
        )

    @strawberry.field(description="S5, S6, A8: the memory text a turn would get now.")
    async def instructions(self, info: GraphInfo) -> Instructions:
        ctx = info.context
        shown = await ctx.service.turns.instructions(ctx.who, self.id)
        return Instructions(
            memory=shown.text, session_keys=list(shown.keys), agent_keys=list(shown.agent_keys)
        )

    @strawberry.field(description="The timeline up to the head, oldest first.")
    async def items(
        self, info: GraphInfo, first: int = DEFAULT_FIRST, after: str | None = None
    ) -> Connection[Item]:
        return await items_of(info, self.head, page_of(ITEMS, first, after))


@strawberry.type
class Instructions:
    memory: str
    session_keys: list[str]
    agent_keys: list[str]


async def _command(
    info: GraphInfo, session_id: str, expected: str, revision: int, command: commands.Command
) -> Session:
    ctx = info.context
    if isinstance(command, commands.Refresh):
        view = await ctx.service.consolidation.refresh(ctx.who, session_id)
    else:
        view = await ctx.service.sessions.command(
            ctx.who, session_id, expected, revision, command, field_prefix=""
        )
    return Session.from_domain(view)


@strawberry.type
class MemoryMutation:
    @strawberry.mutation(description="S13: add or replace an entry and make it active.")
    async def remember(
        self, info: GraphInfo, session_id: strawberry.ID, expected: str, revision: int,
        key: str, content: str, kind: Kind,
    ) -> Session:
        command = commands.Remember(key=key, content=content, kind=kind.value)
        return await _command(info, str(session_id), expected, revision, command)

    @strawberry.mutation(description="S14: mark an entry retracted.")
    async def forget(
        self, info: GraphInfo, session_id: strawberry.ID, expected: str, revision: int, key: str
    ) -> Session:
        command = commands.Forget(key=commands.check_key(key))
        return await _command(info, str(session_id), expected, revision, command)

    @strawberry.mutation(
        description="S15: true/false set a switch, null removes the override, omitted keeps it."
    )
    async def configure(
        self, info: GraphInfo, session_id: strawberry.ID, expected: str, revision: int,
        use: bool | None = strawberry.UNSET, generate: bool | None = strawberry.UNSET,
    ) -> Session:
        command = commands.Configure(
            use=None if use is strawberry.UNSET else use,
            generate=None if generate is strawberry.UNSET else generate,
            set_use=use is not strawberry.UNSET,
            set_generate=generate is not strawberry.UNSET,
        )
        return await _command(info, str(session_id), expected, revision, command)

    @strawberry.mutation(description="S16: consolidate now with the session's model.")
    async def refresh(
        self, info: GraphInfo, session_id: strawberry.ID, expected: str, revision: int
    ) -> Session:
        return await _command(info, str(session_id), expected, revision, commands.Refresh())


@strawberry.type
class HistoryMutation:
    @strawberry.mutation(description="A new session with the history and memory of this one.")
    async def fork(
        self, info: GraphInfo, session_id: strawberry.ID, at: str | None = None
    ) -> Session:
        ctx = info.context
        return Session.from_domain(await ctx.service.history.fork(ctx.who, str(session_id), at))

    @strawberry.mutation(description="Make history and memory what they were at a version.")
    async def revert(
        self, info: GraphInfo, session_id: strawberry.ID, expected: str, revision: int, to: str
    ) -> Session:
        ctx = info.context
        view = await ctx.service.history.revert(ctx.who, str(session_id), expected, revision, to)
        return Session.from_domain(view)
