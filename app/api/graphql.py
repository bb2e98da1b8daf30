"""GraphQL at `/graphql`: every view of SPEC section 5, nested, one statement per level.

Loaders batch each level of a nested read into one statement (sessions, agents, items,
entry histories), so a request costs a bounded number of round trips whatever it nests.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, NewType

import strawberry
from graphql import GraphQLError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL
from strawberry.dataloader import DataLoader
from strawberry.extensions import MaskErrors, MaxAliasesLimiter, QueryDepthLimiter
from strawberry.schema.config import StrawberryConfig
from strawberry.types import Info

from app.errors import ServiceError, ValidationError
from app.memory import commands, values
from app.memory.history import Version
from app.memory.service import Service
from app.memory.turns import instructions_for

EpochMillis = NewType("EpochMillis", int)
EPOCH_MILLIS = strawberry.scalar(
    name="EpochMillis",
    serialize=int,
    parse_value=int,
    description="Milliseconds since the Unix epoch (beyond GraphQL's 32-bit Int).",
)

MAX_PAGE = 200


def _page(offset: int, limit: int) -> tuple[int, int]:
    if offset < 0:
        raise ValidationError("offset is not negative", "offset")
    if not 1 <= limit <= MAX_PAGE:
        raise ValidationError(f"limit is between 1 and {MAX_PAGE}", "limit")
    return offset, limit


@dataclass
class Context:
    """Per request: the service, the caller, and the loaders that batch each nesting level."""

    service: Service
    who: values.Principal
    request: Request | WebSocket
    response: Response | WebSocket

    def __post_init__(self) -> None:
        sessions, who = self.service.sessions, self.who

        async def load_sessions(ids: list[str]) -> list[values.SessionView | None]:
            found = await sessions.views(who, ids)
            return [found.get(i) for i in ids]

        async def load_agents(ids: list[str]) -> list[values.Agent | None]:
            found = await sessions.agents(who, ids)
            return [found.get(i) for i in ids]

        async def load_histories(ids: list[str]) -> list[list[values.Change]]:
            found = await sessions.histories(who, ids)
            return [found.get(i, []) for i in ids]

        service = self.service

        async def load_turn_ids(uids: list[str]) -> list[str | None]:
            found = await service.turns.turns_of_items(uids)
            return [found.get(uid) for uid in uids]

        async def load_turns(ids: list[str]) -> list[dict[str, Any] | None]:
            found = await service.turns.find(who, ids)
            return [found.get(i) for i in ids]

        async def load_run_ids(ids: list[str]) -> list[list[str]]:
            found = await service.consolidation.run_ids(who, ids)
            return [found.get(i, []) for i in ids]

        async def load_runs(ids: list[str]) -> list[dict[str, Any] | None]:
            found = await service.consolidation.find(who, ids)
            return [found.get(i) for i in ids]

        async def load_versions(ids: list[str]) -> list[list[Version]]:
            found = await service.history.versions(who, ids)
            return [found.get(i, []) for i in ids]

        async def load_memories(versions: list[str]) -> list[list[values.Entry]]:
            found = await service.history.memories(who, versions)
            return [found.get(v, []) for v in versions]

        self.sessions = DataLoader(load_fn=load_sessions)
        self.agents = DataLoader(load_fn=load_agents)
        self.histories = DataLoader(load_fn=load_histories)
        self.turn_ids = DataLoader(load_fn=load_turn_ids)
        self.turns = DataLoader(load_fn=load_turns)
        self.run_ids = DataLoader(load_fn=load_run_ids)
        self.runs = DataLoader(load_fn=load_runs)
        self.versions = DataLoader(load_fn=load_versions)
        self.memories = DataLoader(load_fn=load_memories)
        self._items: dict[tuple[int, int], DataLoader[str, list[values.Item]]] = {}
        self._agent_sessions: dict[tuple[int, int], DataLoader[str, list[str]]] = {}

    def agent_sessions(self, offset: int, limit: int) -> DataLoader[str, list[str]]:
        """One loader per page shape, so sibling agents share one statement."""
        if (offset, limit) not in self._agent_sessions:
            sessions, who = self.service.sessions, self.who

            async def load(ids: list[str]) -> list[list[str]]:
                found = await sessions.agent_sessions(who, ids, offset, limit)
                return [found.get(i, []) for i in ids]

            self._agent_sessions[(offset, limit)] = DataLoader(load_fn=load)
        return self._agent_sessions[(offset, limit)]

    def items(self, offset: int, limit: int) -> DataLoader[str, list[values.Item]]:
        """One loader per page shape, so sibling sessions share one statement."""
        if (offset, limit) not in self._items:
            sessions, who = self.service.sessions, self.who

            async def load(ids: list[str]) -> list[list[values.Item]]:
                found = await sessions.items(who, ids, offset, limit)
                return [found.get(i, []) for i in ids]

            self._items[(offset, limit)] = DataLoader(load_fn=load)
        return self._items[(offset, limit)]


GraphInfo = Info[Context, None]


@strawberry.type
class Item:
    """One entry of a session's timeline."""

    id: str
    type: str
    role: str | None
    content: str | None
    app: str | None
    author: str | None
    at: EpochMillis
    seq: int
    uid: strawberry.Private[str]

    @classmethod
    def from_domain(cls, item: values.Item) -> Item:
        return cls(
            uid=item.uid,
            id=item.id,
            type=item.type,
            role=item.role,
            content=item.content,
            app=item.app,
            author=item.author,
            at=EpochMillis(item.at),
            seq=item.seq,
        )

    @strawberry.field(description="The turn the item came in (none for a memory edit).")
    async def turn(self, info: GraphInfo) -> Turn | None:
        turn_id = await info.context.turn_ids.load(self.uid)
        if turn_id is None:
            return None
        return Turn.maybe(await info.context.turns.load(turn_id))


@strawberry.type
class Turn:
    """One model step of a session, with the memory keys it was shown (S5)."""

    id: str
    status: str
    model: str | None
    shown: list[str] = strawberry.field(description="The session memory keys it was shown.")
    item_ids: list[str]
    items: list[Item]
    at: EpochMillis
    completed_at: EpochMillis | None
    session_id: strawberry.Private[str]

    @classmethod
    def maybe(cls, answer: dict[str, Any] | None) -> Turn | None:
        if answer is None:
            return None
        turn = answer["turn"]
        completed = turn.get("completedAt")
        return cls(
            id=turn["id"],
            status=turn["status"],
            model=turn.get("model"),
            shown=list(turn.get("shown") or []),
            item_ids=list(turn.get("items") or []),
            items=[Item.from_domain(item) for item in answer.get("records", [])],
            at=EpochMillis(turn["at"]),
            completed_at=None if completed is None else EpochMillis(completed),
            session_id=answer["session"]["id"],
        )

    @strawberry.field
    async def session(self, info: GraphInfo) -> Session | None:
        return Session.maybe(await info.context.sessions.load(self.session_id))


@strawberry.type
class DroppedChange:
    """A change a model proposed that broke a rule (S9, S10), and which one."""

    op: str
    key: str
    reason: str
    proposal: str


@strawberry.type
class Run:
    """One consolidation: what it read, the model, the changes it kept and dropped, its error."""

    id: str
    status: str
    model: str | None
    trigger: str
    error: str | None
    queued_at: EpochMillis
    finished_at: EpochMillis | None
    attempts: int
    read: list[str] = strawberry.field(description="The ids of the items it read.")
    tried: list[str] = strawberry.field(
        description="The ids of the items a failed run tried to read (they stay unprocessed)."
    )
    dropped: list[DroppedChange]
    kept_ids: strawberry.Private[list[str]]
    turn_id: strawberry.Private[str | None]

    @classmethod
    def maybe(cls, run: dict[str, Any] | None) -> Run | None:
        if run is None:
            return None
        finished = run.get("finishedAt")
        return cls(
            id=run["id"],
            status=run["status"],
            model=run.get("model"),
            trigger=run.get("trigger") or "turn",
            error=run.get("error"),
            queued_at=EpochMillis(run["queuedAt"]),
            finished_at=None if finished is None else EpochMillis(finished),
            attempts=run.get("attempts") or 0,
            read=list(run.get("read") or []),
            tried=list(run.get("tried") or []),
            dropped=[DroppedChange(**d) for d in run.get("dropped") or []],
            kept_ids=list(run.get("kept") or []),
            turn_id=run.get("turn"),
        )

    @strawberry.field(description="The changes it applied.")
    async def changes(self, info: GraphInfo) -> list[Change]:
        chains = await info.context.histories.load_many(self.kept_ids)
        return [Change.from_domain(chain[0]) for chain in chains if chain]

    @strawberry.field
    async def turn(self, info: GraphInfo) -> Turn | None:
        if self.turn_id is None:
            return None
        return Turn.maybe(await info.context.turns.load(self.turn_id))


@strawberry.type
class Change:
    """A recorded memory change: before and after, what made it, the items it cites."""

    id: str
    op: str
    maker: str = strawberry.field(description="person, consolidation, promotion or fork")
    made_by: str | None = strawberry.field(description="the person or run that made it")
    key: str
    content: str | None
    kind: str | None
    status: str | None
    before_content: str | None
    before_kind: str | None
    before_status: str | None
    at: EpochMillis
    revision: int | None
    head: str | None
    model: str | None
    cites: list[Item]
    session_id: strawberry.Private[str | None]
    run_id: strawberry.Private[str | None]

    @classmethod
    def from_domain(cls, change: values.Change) -> Change:
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
            cites=[Item.from_domain(item) for item in change.cites],
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
    kind: str
    status: str
    updated_at: EpochMillis
    sources: list[Item]
    change_id: strawberry.Private[str]

    @classmethod
    def from_domain(cls, entry: values.Entry) -> Entry:
        return cls(
            key=entry.key,
            content=entry.content,
            kind=entry.kind,
            status=entry.status,
            updated_at=EpochMillis(entry.updated_at),
            sources=[Item.from_domain(item) for item in entry.source_items],
            change_id=entry.change,
        )

    @strawberry.field(description="The entry's story, newest change first.")
    async def changes(self, info: GraphInfo) -> list[Change]:
        return [Change.from_domain(c) for c in await info.context.histories.load(self.change_id)]


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

    entries: list[Entry]
    processed: list[str]
    settings: Switches
    overrides: Overrides

    @classmethod
    def from_domain(cls, memory: values.Memory) -> Memory:
        return cls(
            entries=[Entry.from_domain(entry) for entry in memory.entries.values()],
            processed=list(memory.processed),
            settings=Switches(use=memory.settings.use, generate=memory.settings.generate),
            overrides=Overrides(use=memory.overrides.use, generate=memory.overrides.generate),
        )

    @strawberry.field
    def entry(self, key: str) -> Entry | None:
        return next((entry for entry in self.entries if entry.key == key), None)


@strawberry.type
class Session:
    """One conversation of an agent with a person, with its memory."""

    id: str
    kind: str
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
    async def runs(self, info: GraphInfo) -> list[Run]:
        ids = await info.context.run_ids.load(self.id)
        return [run for run in map(Run.maybe, await info.context.runs.load_many(ids)) if run]

    @strawberry.field(description="Every head the session ever had, oldest first.")
    async def versions(self, info: GraphInfo) -> list[SessionVersion]:
        return [
            SessionVersion.from_domain(v) for v in await info.context.versions.load(self.id)
        ]

    @strawberry.field(description="S5, S6: the memory text a turn would get now.")
    async def instructions(self, info: GraphInfo) -> Instructions:
        ctx = info.context
        view = await ctx.sessions.load(self.id)
        assert view is not None
        shown = instructions_for(view, ctx.service.settings.max_length)
        return Instructions(memory=shown.text, session_keys=list(shown.keys), agent_keys=[])

    @strawberry.field(description="The timeline up to the head, oldest first.")
    async def items(self, info: GraphInfo, offset: int = 0, limit: int = 50) -> list[Item]:
        loader = info.context.items(*_page(offset, limit))
        return [Item.from_domain(item) for item in await loader.load(self.head)]


@strawberry.type
class Instructions:
    memory: str
    session_keys: list[str]
    agent_keys: list[str]


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

    @classmethod
    def from_domain(cls, version: Version) -> SessionVersion:
        return cls(
            id=version.id,
            cause=version.cause,
            at=EpochMillis(version.at),
            parent=version.parent,
            reverted_from=version.reverted_from,
            added=list(version.added),
            current=version.current,
        )

    @strawberry.field(description="The memory entries as they were at this version.")
    async def entries(self, info: GraphInfo) -> list[Entry]:
        return [Entry.from_domain(e) for e in await info.context.memories.load(self.id)]

    @strawberry.field(description="The timeline as it was at this version, oldest first.")
    async def items(self, info: GraphInfo, offset: int = 0, limit: int = 50) -> list[Item]:
        loader = info.context.items(*_page(offset, limit))
        return [Item.from_domain(item) for item in await loader.load(self.id)]


@strawberry.type
class Agent:
    """A configured assistant of an org."""

    id: str
    name: str
    shared: bool
    model: str | None

    @classmethod
    def from_domain(cls, agent: values.Agent) -> Agent:
        return cls(id=agent.id, name=agent.name, shared=agent.shared, model=agent.model)

    @classmethod
    def maybe(cls, agent: values.Agent | None) -> Agent | None:
        return None if agent is None else cls.from_domain(agent)

    @strawberry.field
    async def sessions(self, info: GraphInfo, offset: int = 0, limit: int = 50) -> list[Session]:
        ids = await info.context.agent_sessions(*_page(offset, limit)).load(self.id)
        views = await info.context.sessions.load_many(ids)
        return [session for session in map(Session.maybe, views) if session is not None]


@strawberry.type
class Query:
    @strawberry.field
    async def session(self, info: GraphInfo, id: strawberry.ID) -> Session | None:
        return Session.maybe(await info.context.sessions.load(str(id)))

    @strawberry.field
    async def sessions(
        self, info: GraphInfo, offset: int = 0, limit: int = 50, agent: str | None = None
    ) -> list[Session]:
        ctx = info.context
        views = await ctx.service.sessions.list_sessions(ctx.who, agent, *_page(offset, limit))
        return [Session.from_domain(view) for view in views]

    @strawberry.field
    async def agent(self, info: GraphInfo, id: strawberry.ID) -> Agent | None:
        return Agent.maybe(await info.context.agents.load(str(id)))

    @strawberry.field
    async def agents(self, info: GraphInfo, offset: int = 0, limit: int = 50) -> list[Agent]:
        ctx = info.context
        return [
            Agent.from_domain(agent)
            for agent in await ctx.service.sessions.list_agents(ctx.who, *_page(offset, limit))
        ]


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
        key: str, content: str, kind: str,
    ) -> Session:
        command = commands.Remember(key=key, content=content, kind=kind)
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


class ServiceErrors(MaskErrors):
    """Expected errors keep their message and carry `extensions.code`; all others are masked."""

    def __init__(self) -> None:
        super().__init__(should_mask_error=self._unexpected, error_message="Unexpected error.")

    @staticmethod
    def _unexpected(error: GraphQLError) -> bool:
        original = error.original_error
        return original is not None and not isinstance(original, ServiceError)

    def _process_errors(self, errors: list[GraphQLError]) -> list[GraphQLError]:
        return list(self._with_codes(super()._process_errors(errors)))

    @staticmethod
    def _with_codes(errors: Iterable[GraphQLError]) -> Iterator[GraphQLError]:
        for error in errors:
            original = error.original_error
            if isinstance(original, ServiceError):
                extensions: dict[str, Any] = {"code": original.code, "_tag": original.tag}
                field = getattr(original, "field", None)
                if field is not None:
                    extensions["field"] = field
                error = GraphQLError(
                    original.message,
                    nodes=error.nodes,
                    source=error.source,
                    positions=error.positions,
                    path=error.path,
                    original_error=None,
                    extensions=extensions,
                )
            yield error


@strawberry.type
class Mutation(MemoryMutation, HistoryMutation):
    pass


schema = strawberry.Schema(
    query=Query,
    mutation=Mutation,
    config=StrawberryConfig(scalar_map={EpochMillis: EPOCH_MILLIS}),
    extensions=[
        ServiceErrors,
        lambda: QueryDepthLimiter(max_depth=12),
        lambda: MaxAliasesLimiter(max_alias_count=30),
    ],
)


class GraphQLApp(GraphQL[Context, None]):
    """Strawberry's ASGI app, behind the same Bearer auth as REST (GraphiQL's page is open)."""

    def __init__(self, service: Service) -> None:
        super().__init__(schema, graphql_ide="graphiql", allow_queries_via_get=True)
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            request = Request(scope, receive)
            ide_page = request.method == "GET" and "query" not in request.query_params
            if not ide_page:
                try:
                    scope["state"] = {
                        **scope.get("state", {}),
                        "principal": await self.service.tokens.principal(
                            request.headers.get("authorization")
                        ),
                    }
                except ServiceError as exc:
                    await JSONResponse(exc.body(), status_code=exc.status)(scope, receive, send)
                    return
        await super().__call__(scope, receive, send)

    async def get_context(
        self, request: Request | WebSocket, response: Response | WebSocket
    ) -> Context:
        principal: values.Principal = request.scope["state"]["principal"]
        return Context(service=self.service, who=principal, request=request, response=response)


def export_schema() -> str:
    """The SDL that `schema.graphql` holds."""
    return schema.as_str() + "\n"
