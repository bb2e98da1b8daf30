"""The memory service as a LangGraph agent's memory (the `langgraph` extra).

`SessionMemory` binds a client to a session (or takes it from each run's
`config["configurable"]["session_id"]`) and gives a graph three things:

- `prompt(messages, config)`: the session's instructions as a system message, first, before
  each model call (what the service would show a turn now: S5, S6, A8);
- `record(messages, config)`: the turn's messages as turn items, each with an id derived from
  its LangGraph message id, so a step that runs again sends the same ids and the service keeps
  the turn once (a retry with the same item ids answers the turn already recorded; a turn
  some of whose messages the session holds already records the rest);
- `tools()`: `remember`, `forget` and `search_memory`, for the model to call.

`memory_agent(model, memory)` wires them: agent -> tools -> agent ... -> record -> end. Each
piece has an async twin (`aprompt`, `arecord`, the tools' coroutines), for `ainvoke` and an
`AsyncOpenBotMemory`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal, NotRequired

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Checkpointer, RetryPolicy

from openbot_memory_client import models as m
from openbot_memory_client.aio import AsyncOpenBotMemory
from openbot_memory_client.client import OpenBotMemory
from openbot_memory_client.errors import (
    OpenBotMemoryError,
    SessionConflict,
    Unavailable,
    Unreachable,
)

ID_PREFIX = "lg-"
# The most timeline items the service answers in one page.
PAGE = 200


class MemoryState(MessagesState):
    """The agent's messages, and the ids of those already recorded as turn items (by id, not
    by place: a graph may remove messages, `RemoveMessage`, between turns)."""

    recorded: NotRequired[list[str]]


def item_id(message_id: str, part: int = 0) -> str:
    """A turn item id for part `part` of a LangGraph message: stable for the message, and
    within the service's id alphabet and length whatever the message id is."""
    digest = hashlib.sha256(f"{message_id}#{part}".encode()).hexdigest()[:40]
    return ID_PREFIX + digest


def items_of(
    messages: Sequence[BaseMessage], step: str = "", apps: Mapping[str, str] | None = None
) -> list[m.TurnItem]:
    """Turn items of messages: a person's and the model's text, each tool call and result.
    System messages are left out (the instructions come from the service itself). A message
    without an id is named by `step` and its place, which a retried step repeats; without
    either it is a ValueError. The result of a tool `apps` names (tool name: App name) is that
    App's: outside data, which no agent entry rests on alone (A4)."""
    apps = apps or {}
    items: list[m.TurnItem] = []
    for place, message in enumerate(messages):
        if not message.id and not step:
            raise ValueError(
                "a message without an id needs `step`, a name for this turn: the item ids it "
                "takes are unique in the session")
        key = message.id or f"{step}#{place}"
        if isinstance(message, HumanMessage):
            items.append(m.TurnItem(id=item_id(key), role="user", content=message.text))
        elif isinstance(message, AIMessage):
            if message.text or not message.tool_calls:
                items.append(m.TurnItem(id=item_id(key), role="assistant", content=message.text))
            for part, call in enumerate(message.tool_calls, start=1):
                content = json.dumps(
                    {"name": call["name"], "args": call["args"], "id": call.get("id")},
                    ensure_ascii=False, sort_keys=True)
                items.append(m.TurnItem(id=item_id(key, part), type="tool_call",
                                        role="assistant", content=content))
        elif isinstance(message, ToolMessage):
            items.append(m.TurnItem(id=item_id(key), type="tool_result", role="tool",
                                    content=message.text, app=apps.get(message.name or "")))
    return items


class SessionMemory:
    """A session of the memory service as a LangGraph agent's memory. With an
    `AsyncOpenBotMemory` use the graph's async methods (`ainvoke`, `astream`); with an
    `OpenBotMemory` both kinds work (the async ones run its calls in a thread)."""

    def __init__(
        self, client: OpenBotMemory | AsyncOpenBotMemory, session_id: str | None = None, *,
        wait: float | None = None, apps: Mapping[str, str] | None = None,
    ) -> None:
        """`session_id` is the session of every run that does not name its own in
        `config["configurable"]["session_id"]`; `wait` (seconds) records each turn with
        `?wait=`, so the next turn sees what consolidation made of it. `apps` names the tools
        whose results are an App's (tool name: App name), outside data (A4)."""
        self.client = client
        self.session_id = session_id
        self.wait = wait
        self.apps = dict(apps or {})

    def session_of(self, config: RunnableConfig | None) -> str:
        configurable = (config or {}).get("configurable") or {}
        session = configurable.get("session_id") or self.session_id
        if not session:
            raise ValueError("no session: pass session_id, or configurable.session_id")
        return str(session)

    def _blocking(self) -> OpenBotMemory:
        if not isinstance(self.client, OpenBotMemory):
            raise TypeError("an AsyncOpenBotMemory is used from async code: ainvoke the graph")
        return self.client

    def instructions(self, config: RunnableConfig | None = None) -> SystemMessage | None:
        """The session's instructions now, as a system message (None when there are none)."""
        return _system(self._blocking().instructions(self.session_of(config)))

    async def ainstructions(self, config: RunnableConfig | None = None) -> SystemMessage | None:
        if isinstance(self.client, AsyncOpenBotMemory):
            return _system(await self.client.instructions(self.session_of(config)))
        return await asyncio.to_thread(self.instructions, config)

    def prompt(
        self, messages: Sequence[BaseMessage], config: RunnableConfig | None = None
    ) -> list[BaseMessage]:
        """What the model is sent: the instructions first, then the conversation."""
        return _first(self.instructions(config), messages)

    async def aprompt(
        self, messages: Sequence[BaseMessage], config: RunnableConfig | None = None
    ) -> list[BaseMessage]:
        return _first(await self.ainstructions(config), messages)

    def record(
        self, messages: Sequence[BaseMessage], config: RunnableConfig | None = None,
        step: str = "",
    ) -> m.TurnView | None:
        """Record messages as one turn (None when none of them makes an item, or the session
        holds each already). Sent again with the same messages, the service answers the turn
        it already has. Where the service refuses the turn because the session holds some of
        its items already, as they are (a turn recorded whose answer was lost, sent again with
        the messages after it), the rest are the turn; items the session holds under other
        content leave the refusal standing."""
        items = items_of(messages, step, self.apps)
        if not items:
            return None
        client, session = self._blocking(), self.session_of(config)
        try:
            return client.record_turn(session, items, wait=self.wait)
        except SessionConflict:
            rest = _unheld(items, _held(client, session, items))
            if rest is None:
                raise
        return client.record_turn(session, rest, wait=self.wait) if rest else None

    async def arecord(
        self, messages: Sequence[BaseMessage], config: RunnableConfig | None = None,
        step: str = "",
    ) -> m.TurnView | None:
        if not isinstance(self.client, AsyncOpenBotMemory):
            return await asyncio.to_thread(self.record, messages, config, step)
        items = items_of(messages, step, self.apps)
        if not items:
            return None
        client, session = self.client, self.session_of(config)
        try:
            return await client.record_turn(session, items, wait=self.wait)
        except SessionConflict:
            rest = _unheld(items, await _aheld(client, session, items))
            if rest is None:
                raise
        return await client.record_turn(session, rest, wait=self.wait) if rest else None

    # -- tools ---------------------------------------------------------------------------
    def tools(self) -> list[BaseTool]:
        """`remember`, `forget` and `search_memory` on the run's session."""

        def remember(
            key: str, content: str,
            kind: Literal["fact", "decision", "preference", "procedure", "hypothesis"],
            config: RunnableConfig,
        ) -> str:
            """Remember one fact for the rest of this conversation under a short key
            (lowercase words joined by '-'); the same key replaces what it held."""
            return self._change(config, m.Remember(key=key, content=content, kind=kind))

        async def aremember(
            key: str, content: str,
            kind: Literal["fact", "decision", "preference", "procedure", "hypothesis"],
            config: RunnableConfig,
        ) -> str:
            return await self._achange(config, m.Remember(key=key, content=content, kind=kind))

        def forget(key: str, config: RunnableConfig) -> str:
            """Forget the fact under `key`: it is no longer true or wanted."""
            return self._change(config, m.Forget(key=key))

        async def aforget(key: str, config: RunnableConfig) -> str:
            return await self._achange(config, m.Forget(key=key))

        def search_memory(query: str, config: RunnableConfig) -> str:
            """Search what is remembered, by words (Lucene syntax: words, "a phrase", OR)."""
            try:
                hits = self._blocking().search(
                    query, session=self.session_of(config), limit=10, status="active")
            except OpenBotMemoryError as exc:
                return f"search failed: {exc.message}"
            return _hits(hits)

        async def asearch_memory(query: str, config: RunnableConfig) -> str:
            if not isinstance(self.client, AsyncOpenBotMemory):
                return await asyncio.to_thread(search_memory, query, config)
            try:
                hits = await self.client.search(query, session=self.session_of(config),
                                                limit=10, status="active")
            except OpenBotMemoryError as exc:
                return f"search failed: {exc.message}"
            return _hits(hits)

        return [
            StructuredTool.from_function(func=fn, coroutine=afn)
            for fn, afn in ((remember, aremember), (forget, aforget),
                            (search_memory, asearch_memory))
        ]

    def _change(self, config: RunnableConfig, command: m.Command) -> str:
        try:
            view = self._blocking().update(self.session_of(config), lambda _: command)
        except OpenBotMemoryError as exc:
            return f"not changed: {exc.message}"
        return f"done (revision {view.session.revision})"

    async def _achange(self, config: RunnableConfig, command: m.Command) -> str:
        if not isinstance(self.client, AsyncOpenBotMemory):
            return await asyncio.to_thread(self._change, config, command)
        try:
            view = await self.client.update(self.session_of(config), lambda _: command)
        except OpenBotMemoryError as exc:
            return f"not changed: {exc.message}"
        return f"done (revision {view.session.revision})"

    # -- graph nodes -----------------------------------------------------------------------
    def record_node(self, state: MemoryState, config: RunnableConfig) -> dict[str, Any]:
        """Record the messages not recorded yet as this turn."""
        fresh, step, recorded = _unrecorded(state)
        self.record(fresh, config, step=step)
        return {"recorded": recorded}

    async def arecord_node(self, state: MemoryState, config: RunnableConfig) -> dict[str, Any]:
        fresh, step, recorded = _unrecorded(state)
        await self.arecord(fresh, config, step=step)
        return {"recorded": recorded}


def _unrecorded(state: MemoryState) -> tuple[list[BaseMessage], str, list[str]]:
    """The state's messages not recorded yet, the step they are recorded in (it names a message
    without an id: a retried step repeats it), and the recorded ids once they are: those of
    the state's messages (a removed one does not come back). The messages of a
    `MessagesState` carry ids: its reducer gives each one."""
    done = set(state.get("recorded", []))
    messages = state["messages"]
    fresh: list[BaseMessage] = [m for m in messages if m.id not in done]
    return fresh, f"turn-{len(done)}", [m.id for m in messages if m.id]


def _held(
    client: OpenBotMemory, session_id: str, items: Sequence[m.TurnItem]
) -> dict[str, m.Item]:
    """The items of the session's timeline (at its head: the branch a turn is checked
    against) that have the ids of `items`, by id, read a page at a time until each is found
    or the timeline ends."""
    wanted = {item.id for item in items}
    head = client.get_session(session_id).session.head
    held: dict[str, m.Item] = {}
    offset = 0
    while True:
        page = client.version(session_id, head, offset=offset, limit=PAGE).items
        held.update((one.id, one) for one in page if one.id in wanted)
        if len(page) < PAGE or len(held) == len(wanted):
            return held
        offset += len(page)


async def _aheld(
    client: AsyncOpenBotMemory, session_id: str, items: Sequence[m.TurnItem]
) -> dict[str, m.Item]:
    wanted = {item.id for item in items}
    head = (await client.get_session(session_id)).session.head
    held: dict[str, m.Item] = {}
    offset = 0
    while True:
        page = (await client.version(session_id, head, offset=offset, limit=PAGE)).items
        held.update((one.id, one) for one in page if one.id in wanted)
        if len(page) < PAGE or len(held) == len(wanted):
            return held
        offset += len(page)


def _unheld(items: Sequence[m.TurnItem], held: dict[str, m.Item]) -> list[m.TurnItem] | None:
    """The items the session does not hold, where it holds the others as they are; None where
    it holds none of them, or one under other content (its id was used for something else)."""
    rest: list[m.TurnItem] = []
    for item in items:
        there = held.get(item.id or "")
        if there is None:
            rest.append(item)
        elif (there.type, there.role, there.content) != (item.type, item.role, item.content):
            return None
    return rest if len(rest) < len(items) else None


def _system(shown: m.Instructions) -> SystemMessage | None:
    return SystemMessage(content=shown.memory) if shown.memory.strip() else None


def _first(system: SystemMessage | None, messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    return [system, *messages] if system is not None else list(messages)


def _hits(hits: list[m.Hit]) -> str:
    """The entries found that are remembered now (asked of the service, and checked: a service
    that does not know `status` answers forgotten ones too), one a line, under the name the
    caller's view lists them."""
    active = [hit for hit in hits if hit.entry.status == "active"]
    if not active:
        return "nothing found"
    return "\n".join(f"{hit.listed_as}: {hit.entry.content}" for hit in active)


def _may_mend(error: Exception) -> bool:
    """Whether sending a turn again may succeed: no answer came (`Unreachable`: the connection
    failed, or the answer was lost on the way), or the service was unavailable. A refusal (bad
    input, no such session, a conflict) is the same when sent again; a turn refused because
    the session holds some of its items already is mended by `record` itself."""
    return isinstance(error, (Unavailable, Unreachable))


def memory_agent(
    model: BaseChatModel,
    memory: SessionMemory,
    *,
    tools: Sequence[BaseTool] = (),
    checkpointer: Checkpointer = None,
    retry: RetryPolicy | None = None,
) -> CompiledStateGraph[MemoryState, Any, MemoryState, MemoryState]:
    """A tool-calling agent whose memory is `memory`: each model call gets the session's
    instructions first; when the model answers without a tool call the turn is recorded.
    The model gets `memory.tools()` and `tools`. `retry` is the record step's policy (by
    default three attempts where sending again may mend it: the answer was lost, or the
    service was unavailable; sending the same ids again is safe)."""
    every_tool = [*memory.tools(), *tools]
    bound = model.bind_tools(every_tool)

    def agent(state: MemoryState, config: RunnableConfig) -> dict[str, list[AnyMessage]]:
        answer = bound.invoke(memory.prompt(state["messages"], config), config)
        assert isinstance(answer, AIMessage)
        return {"messages": [answer]}

    async def aagent(state: MemoryState, config: RunnableConfig) -> dict[str, list[AnyMessage]]:
        answer = await bound.ainvoke(await memory.aprompt(state["messages"], config), config)
        assert isinstance(answer, AIMessage)
        return {"messages": [answer]}

    def route(state: MemoryState) -> str:
        return "tools" if tools_condition(dict(state)) == "tools" else "record"

    graph = StateGraph(MemoryState)
    graph.add_node("agent", RunnableLambda(agent, afunc=aagent, name="agent"))
    graph.add_node("tools", ToolNode(every_tool))
    graph.add_node("record", RunnableLambda(memory.record_node, afunc=memory.arecord_node,
                                            name="record"),
                   retry_policy=retry or RetryPolicy(max_attempts=3, retry_on=_may_mend))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", route, {"tools": "tools", "record": "record"})
    graph.add_edge("tools", "agent")
    graph.add_edge("record", END)
    return graph.compile(checkpointer=checkpointer)
