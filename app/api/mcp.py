"""MCP at `/mcp`: the memory as tools and resources for agents, over the official
SDK's streamable HTTP transport. A transport over the same `app/memory` services the REST
handlers call, answering the same JSON; the app's own Bearer authentication guards it (the
request reaches this endpoint only with a principal), and each call acts for the principal of
its own HTTP request.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Annotated, Any, Literal, TypeVar, get_origin

import pydantic
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import (
    ResourceError,
    ResourceNotFoundError,
    ToolError,
    UnexpectedToolError,
)
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import CallToolResult, InputRequiredResult
from pydantic import BeforeValidator, Field
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from app.api import bodies
from app.api.auth import principal_of
from app.api.limits import WholeBody
from app.api.responses import agents as agent_answers
from app.api.responses import search as search_answers
from app.api.responses import sessions as session_answers
from app.api.responses import turns as turn_answers
from app.domain.enums import TurnStatus
from app.domain.principals import Principal
from app.errors import (
    AgentConflict,
    ServiceError,
    SessionConflict,
    Unauthorized,
    ValidationError,
)
from app.memory.changes import commands
from app.memory.paging import MAX_OFFSET
from app.memory.service import Service
from app.memory.views.search import DEFAULT_LIMIT, MAX_LIMIT, MAX_QUERY

PATH = "/mcp"
KEEP: Literal["keep"] = "keep"

INSTRUCTIONS = """\
OpenBot memory: what agents learn, kept per session (facts of one conversation, with a history
of versions) and per agent (lasting procedures, preferences and decisions over all its
sessions). Read before you write: every write names the state it expects (a session's `head`
and `revision`, an agent memory's `version`), and a stale one is refused with nothing changed,
so read again and retry. Memory is past evidence: the user's current instructions win. Never
store passwords, keys, tokens or links that give access; they are refused."""

CONFLICT_HINT = (
    "Nothing changed: the memory moved since you read it. Read it again ({read}) and retry "
    "with the {what} it answers, if your change still makes sense."
)


def tool_error(exc: ServiceError) -> ToolError:
    """A service error as the tool error a model reads: the REST error body as JSON, and for a
    conflict what to do next."""
    body: dict[str, object] = exc.body()
    if isinstance(exc, SessionConflict):
        body["retry"] = CONFLICT_HINT.format(read="read_memory", what="head and revision")
    elif isinstance(exc, AgentConflict):
        body["retry"] = CONFLICT_HINT.format(read="agent_memory", what="version")
    return ToolError(json.dumps(body))


@contextmanager
def service_errors(service: Service) -> Iterator[None]:
    """A service error raised inside as the tool error a model reads; a conflict is counted
    as REST and GraphQL count theirs (`openbot_memory_conflicts_total`, route `/mcp`)."""
    try:
        yield
    except ServiceError as exc:
        if isinstance(exc, SessionConflict | AgentConflict):
            service.db.telemetry.metrics.conflicts.labels(PATH, exc.tag).inc()
        raise tool_error(exc) from exc


class MemoryServer(MCPServer):
    """The SDK's server, where arguments a tool's input schema refuses read as a refusal by
    the service does: the REST error body, a ValidationError naming the argument at fault.
    So do the arguments a REST body refuses and the SDK lets through: one the tool does not
    take (the SDK drops it), and a string that is not text (an escaped half of a surrogate
    pair, which JSON lets through and no store can encode)."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context | None = None
    ) -> CallToolResult | InputRequiredResult:
        bad = await self.bad_arguments(name, arguments)
        if bad is not None:
            raise ToolError(f"Error executing tool {name}: {tool_error(bad)}")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            refused = exc.__cause__
            if isinstance(exc, UnexpectedToolError) or not isinstance(
                refused, pydantic.ValidationError
            ):
                raise
            # the text a tool's own refusal has: the SDK's prefix, then the REST error body
            answer = tool_error(bodies.validation_error(refused))
            raise ToolError(f"Error executing tool {name}: {answer}") from refused

    async def bad_arguments(
        self, name: str, arguments: dict[str, Any]
    ) -> ServiceError | None:
        """What a REST body would be refused for, in the order REST checks it; None for a tool
        that does not exist (the SDK answers that)."""
        taken = {tool.name: tool.input_schema.get("properties", {})
                 for tool in await self.list_tools()}.get(name)
        if taken is None:
            return None
        broken = bodies.broken_text(arguments)
        if broken is not None:
            return bodies.not_text(broken)
        unknown = sorted(set(arguments) - set(taken))
        if unknown:
            return ValidationError(f"{unknown[0]}: the tool takes no such argument", unknown[0])
        return None


class ArgumentsAsSent(FuncMetadata):
    """A tool's arguments read as REST reads a body: strictly (no integer from a string or a
    boolean, no switch from a word), and each string as the text it is. The SDK reads a string
    sent for an argument that is not only a string as JSON, so `"null"` would be no value (no
    `session_id` to keep a search to, no `about` to forget for); here only a list sent as its
    JSON text is read as that list, as some model clients send one."""

    def pre_parse_json(self, data: dict[str, Any]) -> dict[str, Any]:
        lists = {name for name, field in self.arg_model.model_fields.items()
                 if get_origin(field.annotation) is list}
        return data | super().pre_parse_json(
            {name: value for name, value in data.items() if name in lists}
        )

    def validate_arguments(self, arguments_to_validate: dict[str, Any]) -> dict[str, Any]:
        arguments = self.pre_parse_json(arguments_to_validate)
        return self.arg_model.model_validate(arguments, strict=True).model_dump_one_level()


def tool_of(fn: Callable[..., Any], description: str) -> Tool:
    """`fn` as a tool whose arguments are read as sent (`ArgumentsAsSent`)."""
    tool = Tool.from_function(fn, description=description)
    tool.parameters["additionalProperties"] = False  # as `bad_arguments` refuses another
    taken = tool.fn_metadata
    tool.fn_metadata = ArgumentsAsSent(
        arg_model=taken.arg_model, output_schema=taken.output_schema,
        output_model=taken.output_model, wrap_output=taken.wrap_output,
    )
    return tool


def principal(ctx: Context) -> Principal:
    """The principal of the HTTP request that carried this call."""
    request = ctx.request_context.request
    if not isinstance(request, Request):
        raise tool_error(Unauthorized("send Authorization: Bearer <token>"))
    return principal_of(request)


SessionId = Annotated[str, Field(description="The session's id (ses-…).")]
AgentId = Annotated[str, Field(description="The agent's id (agt-…).")]
Head = Annotated[str, Field(description="The session's `head` as you last read it.")]
# Neo4j's integers are 64-bit: as over REST (bodies.Integer, bodies.Count), a wider one is
# refused as input, and so is a negative version.
Revision = Annotated[bodies.Integer, Field(
    description="The session's `revision` as you last read it.",
)]
Version = Annotated[bodies.Count, Field(
    description="The agent memory's `version` as you last read it.",
)]
# The schemas `tools/list` gives are those of the REST bodies (bodies.py): documentation, as
# there; the service's own checks give its messages.
Key = Annotated[
    bodies.Key,
    Field(description="A short stable key for one fact (reuse it for the same fact)."),
]
AgentKey = Annotated[
    bodies.AgentKey,
    Field(description="A short stable key for one experience (reuse it for the same one)."),
]


def no_number(value: Any) -> Any:
    """A switch is a boolean, null or "keep": a number is refused, as REST refuses it (the
    Literal alone takes 1 and 0, equal to true and false)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise ValueError('a switch is true, false, null or "keep"')
    return value


# one Literal rather than a union, so that a refused value is named as the argument alone
Switch = Annotated[
    Literal[True, False, "keep"] | None,
    BeforeValidator(no_number),
    Field(description="true or false set it for this session, null follows the org default "
                      "again, \"keep\" (the default) leaves it as it is."),
]


def switch(value: bool | str | None) -> tuple[bool, bool | None]:
    """Whether a Configure switch was sent, and its value (None: follow the org default)."""
    if value == KEEP:
        return False, None
    return True, None if value is None else bool(value)


F = TypeVar("F", bound=Callable[..., Any])


def build(service: Service) -> MCPServer:
    """The MCP server: its tools and resources, each calling the service for the caller."""
    tools: list[Tool] = []

    def tool(description: str) -> Callable[[F], F]:
        def taken(fn: F) -> F:
            tools.append(tool_of(fn, description))
            return fn

        return taken

    @tool(
        "Read a session: its `head` and `revision` (needed to change its memory) "
        "and its memory: every entry by key (content, kind, sources, status active or "
        "retracted), the items consolidation processed, and its settings. Call it before "
        "remember, forget or configure, and again after a conflict."
    )
    async def read_memory(session_id: SessionId, ctx: Context) -> dict[str, Any]:
        with service_errors(service):
            view = await service.sessions.view(principal(ctx), session_id, items=False)
            return dict(session_answers.session_view_json(view))

    @tool(
        "Remember one fact in a session's memory: add the entry under `key` or "
        "replace it, and make it active. `kind` is fact, decision, preference, procedure or "
        "hypothesis. Send the `head` and `revision` you last read (read_memory); if the session "
        "moved since, nothing changes and you get a SessionConflict: read again and retry. "
        "Answers the new Session view (a new head and revision)."
    )
    async def remember(
        session_id: SessionId, expected: Head, revision: Revision, key: Key,
        content: Annotated[
            bodies.Content, Field(description="The fact, in one or two sentences.")
        ],
        kind: Annotated[bodies.KindName, Field(description="fact, decision, preference, "
                                                           "procedure or hypothesis")],
        ctx: Context,
    ) -> dict[str, Any]:
        with service_errors(service):
            command = commands.Remember(key=key, content=content, kind=kind)
            view = await service.sessions.command(
                principal(ctx), session_id, expected, revision, command, items=False
            )
            return dict(session_answers.session_view_json(view))

    @tool(
        "Forget one fact of a session: mark the entry under `key` retracted (it "
        "stays in the memory, marked, and is never shown to a model again). Send the `head` "
        "and `revision` you last read; a stale one (or an unknown key) is a SessionConflict "
        "and nothing changes: read again and retry. Answers the new Session view."
    )
    async def forget(
        session_id: SessionId, expected: Head, revision: Revision, key: Key, ctx: Context
    ) -> dict[str, Any]:
        with service_errors(service):
            command = commands.Forget(key=key)
            view = await service.sessions.command(
                principal(ctx), session_id, expected, revision, command, items=False
            )
            return dict(session_answers.session_view_json(view))

    @tool(
        "Switch a session's memory on or off: `use` (memory goes into the model's "
        "instructions) and `generate` (turns teach memory). Changes no history: the head "
        "stays, the revision grows. Send the `head` and `revision` you last read; a stale one "
        "is a SessionConflict: read again and retry. Answers the new Session view."
    )
    async def configure(
        session_id: SessionId, expected: Head, revision: Revision, ctx: Context,
        use: Switch = KEEP, generate: Switch = KEEP,
    ) -> dict[str, Any]:
        with service_errors(service):
            set_use, use_value = switch(use)
            set_generate, generate_value = switch(generate)
            command = commands.Configure(use_value, generate_value, set_use, set_generate)
            view = await service.sessions.command(
                principal(ctx), session_id, expected, revision, command, items=False
            )
            return dict(session_answers.session_view_json(view))

    @tool(
        "The memory text the next turn of a session would be given now (session "
        "entries and the agent's lasting entries the session's person may see, newest first, "
        "within the budget), and the keys it includes. Use it to see what a model is told."
    )
    async def instructions(session_id: SessionId, ctx: Context) -> dict[str, Any]:
        with service_errors(service):
            shown = await service.turns.instructions(principal(ctx), session_id)
        return dict(turn_answers.instructions_json(shown))

    @tool(
        "Record a completed turn of a session: its items in order (each {type: "
        "message|tool_call|tool_result|app_action|approval, role: user|assistant|tool|system, "
        "content, id?, app?}). Answers at once with the turn and its item ids; memory forms "
        "afterwards, off the request. Choose item ids to make a retry safe: the same ids answer "
        "the first turn unchanged."
    )
    async def record_turn(
        session_id: SessionId,
        items: Annotated[list[bodies.TurnItemBody], Field(min_length=1, max_length=500)],
        ctx: Context,
        model: Annotated[
            str | None, Field(description="builtin or openai:<model>; default: the session's")
        ] = None,
    ) -> dict[str, Any]:
        with service_errors(service):
            answer, _, _ = await service.turns.record(
                principal(ctx), session_id, bodies.turn_items(items), model, TurnStatus.COMPLETED
            )
            return dict(turn_answers.turn_view_json(answer))

    @tool(
        "Read an agent's lasting memory (procedures, preferences and decisions over "
        "all its sessions) as you may see it: shared entries and your own private ones (listed "
        "as key@person), and its "
        "`version`, needed to change it. Call it before remember_for_agent or forget_for_agent, "
        "and again after a conflict."
    )
    async def agent_memory(agent_id: AgentId, ctx: Context) -> dict[str, Any]:
        with service_errors(service):
            memory = await service.agent_memory.view(principal(ctx), agent_id)
            return dict(agent_answers.agent_memory_json(memory))

    @tool(
        "Remember lasting experience for an agent: a procedure, preference or "
        "decision that holds beyond this conversation (facts of one task belong in the "
        "session, with remember). `about` names the person it is about; `visibility` private "
        "keeps it to that person (it needs `about`), shared (the default) shows it to every "
        "member. Send the `version` you last read (agent_memory); a stale one is an "
        "AgentConflict and nothing changes: read again and retry. Answers the new memory."
    )
    async def remember_for_agent(
        agent_id: AgentId, expected: Version, key: AgentKey,
        content: Annotated[
            bodies.Content, Field(description="The experience, in one or two sentences.")
        ],
        kind: Annotated[
            bodies.AgentKindName, Field(description="procedure, preference or decision")
        ],
        ctx: Context,
        about: Annotated[str | None, Field(description="the person it is about")] = None,
        visibility: Annotated[
            Literal["shared", "private"], Field(description="shared or private to `about`")
        ] = "shared",
    ) -> dict[str, Any]:
        with service_errors(service):
            command = commands.AgentRemember(key, content, kind, about, visibility)
            memory = await service.agent_memory.command(
                principal(ctx), agent_id, expected, command
            )
            return dict(agent_answers.agent_memory_json(memory))

    @tool(
        "Forget an agent entry: mark it retracted (the shared entry of the key, or "
        "with `about` that person's private one, listed as key@person). Forgetting an entry "
        "already retracted changes nothing. Send the `version` you last read; a stale one (or "
        "an unknown key) is an AgentConflict and nothing changes: read again and retry. "
        "Answers the memory."
    )
    async def forget_for_agent(
        agent_id: AgentId, expected: Version, key: AgentKey, ctx: Context,
        about: Annotated[
            str | None, Field(description="the person whose private entry of the key it is")
        ] = None,
    ) -> dict[str, Any]:
        with service_errors(service):
            command = commands.AgentForget(key, about)
            memory = await service.agent_memory.command(
                principal(ctx), agent_id, expected, command
            )
            return dict(agent_answers.agent_memory_json(memory))

    @tool(
        "Find memory by its words: full-text search (Lucene syntax: words, \"a "
        "phrase\", AND, OR, NOT, prefix*) over the session and agent entries you may read, best "
        "first (an exact key match first). Each hit has the entry (with its `session` or "
        "`agent`), a score and a snippet with matches **marked**. `session_id` keeps one "
        "session's entries, `agent_id` one agent's memory and its sessions' entries; `more` says "
        "whether hits follow, at `offset` plus `limit`. Use it to "
        "find a fact you do not know the key or session of; then fact_story tells where it "
        "came from."
    )
    async def search_memory(
        query: Annotated[str, Field(
            description="What to look for, in Lucene syntax.",
            json_schema_extra={"minLength": 1, "maxLength": MAX_QUERY},  # checked as REST's q
        )],
        ctx: Context,
        session_id: Annotated[str | None, Field(description="only this session")] = None,
        agent_id: Annotated[str | None, Field(description="only this agent")] = None,
        status: Annotated[bodies.StatusName | None, Field(
            description="only entries of this status (active: remembered now; retracted: "
                        "forgotten)")] = None,
        limit: Annotated[int, Field(ge=1, le=MAX_LIMIT), bodies.WHOLE] = DEFAULT_LIMIT,
        offset: Annotated[int, Field(ge=0, le=MAX_OFFSET, description="hits to pass over"),
                          bodies.WHOLE] = 0,
    ) -> dict[str, Any]:
        with service_errors(service):
            found = await service.search.search(
                principal(ctx), query, session=session_id, agent=agent_id, status=status,
                offset=offset, limit=limit,
            )
            return dict(search_answers.search_json(found))

    @tool(
        "The story of one fact of a session: every change behind the entry under "
        "`key`, newest first: what it said before and after, what made it (a person, a "
        "consolidation run and its model, a fork) and the conversation items it cites. Use it "
        "to check where a fact came from before you rely on it or correct it."
    )
    async def fact_story(session_id: SessionId, key: Key, ctx: Context) -> dict[str, Any]:
        with service_errors(service):
            key = commands.check_key(key)  # as a write names it
            story = await service.provenance.fact_story(principal(ctx), session_id, key)
            changes = [session_answers.change_json(change) for change in story]
            return {"key": key, "changes": changes}

    server = MemoryServer("openbot-memory", instructions=INSTRUCTIONS, tools=tools)

    @server.resource(
        "openbot://sessions/{session_id}/memory",
        name="session-memory",
        description="A session's memory (the S2 view), to attach as context.",
        mime_type="application/json",
    )
    async def session_memory(session_id: str, ctx: Context) -> str:
        try:
            view = await service.sessions.view(principal(ctx), session_id, items=False)
        except ServiceError as exc:
            raise resource_error(exc) from exc
        return json.dumps(session_answers.memory_json(view.memory))

    @server.resource(
        "openbot://agents/{agent_id}/memory",
        name="agent-memory",
        description="An agent's lasting memory as you may see it, to attach as context.",
        mime_type="application/json",
    )
    async def agent_memory_resource(agent_id: str, ctx: Context) -> str:
        try:
            memory = await service.agent_memory.view(principal(ctx), agent_id)
        except ServiceError as exc:
            raise resource_error(exc) from exc
        return json.dumps(agent_answers.agent_memory_json(memory))

    return server


def resource_error(exc: ServiceError) -> ResourceError:
    """A failed read of a resource, carrying the REST error body: a resource the caller may not
    read, or a refused request, is the caller's fault (as an unknown URI, -32602); the service
    failing is an internal error (-32603)."""
    fault = ResourceNotFoundError if exc.status < 500 else ResourceError
    return fault(json.dumps(exc.body()))


INVALID_ID = "Invalid Request: an id is a string or an integer"


def refused_id(body: bytes) -> JSONResponse | None:
    """The JSON-RPC error (-32600) for a request whose `id` is neither a string nor an integer
    (MCP's rule), which the SDK would take for a notification: run it unanswered, its client
    waiting for ever. None for any other body, which the SDK reads and answers itself."""
    try:
        request = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(request, dict) or "id" not in request:
        return None
    found = request["id"]
    if isinstance(found, str) or (isinstance(found, int) and not isinstance(found, bool)):
        return None
    error = {"code": -32600, "message": INVALID_ID}
    return JSONResponse({"jsonrpc": "2.0", "id": None, "error": error}, status_code=400)


class McpEndpoint:
    """The MCP server as a route of the app, and the session manager the app's lifespan runs."""

    def __init__(self, service: Service, max_body_bytes: int) -> None:
        self.server = build(service)
        # Stateless: each POST is answered on its own (JSON, no server-held session), so any
        # process of the service can answer any call. DNS-rebinding protection guards servers
        # that trust the browser's ambient access; this one trusts only a Bearer token. A body
        # reaches the SDK within the service's limit (`BodyLimit`), which the SDK keeps too.
        self.app = self.server.streamable_http_app(
            streamable_http_path=PATH,
            stateless_http=True,
            json_response=True,
            max_request_body_size=max_body_bytes,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )

    def route(self) -> Route:
        """The route of `PATH`; the body is read through the app's limit before the SDK reads
        it (`WholeBody`), so one over the limit is the 413 REST answers, not the SDK's 500.
        POST alone: a stateless server sends nothing unasked, so it opens no stream for a GET
        (which would stay open with nothing to send) and has no session to DELETE; either is
        the 405 every route answers."""
        return Route(PATH, WholeBody(self.app, refuse=refused_id), methods=["POST"])

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with self.server.session_manager.run():
            yield
