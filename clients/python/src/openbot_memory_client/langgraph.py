"""The memory service as a LangGraph agent's memory (the `langgraph` extra).

`SessionMemory` binds a client to a session (or takes it from each run's
`config["configurable"]["session_id"]`) and gives a graph three things:

- `prompt(messages, config)`: the session's instructions as a system message, first, before
  each model call (what the service would show a turn now: S5, S6, A8);
- `record(messages, config)`: the turn's messages as turn items, each with an id derived from
  its LangGraph message id, so a step that runs again sends the same ids and the service keeps
  the turn once (a retry with the same item ids answers the turn already recorded);
- `tools()`: `remember`, `forget` and `search_memory`, for the model to call.

`memory_agent(model, memory)` wires them: agent -> tools -> agent ... -> record -> end.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
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
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Checkpointer, RetryPolicy

from openbot_memory_client import models as m
from openbot_memory_client.client import OpenBotMemory
from openbot_memory_client.errors import OpenBotMemoryError

ID_PREFIX = "lg-"


class MemoryState(MessagesState):
    """The agent's messages, and how many of them are already recorded as turn items."""

    recorded: NotRequired[int]


def item_id(message_id: str, part: int = 0) -> str:
    """A turn item id for part `part` of a LangGraph message: stable for the message, and
    within the service's id alphabet and length whatever the message id is."""
    digest = hashlib.sha256(f"{message_id}#{part}".encode()).hexdigest()[:40]
    return ID_PREFIX + digest


def items_of(messages: Sequence[BaseMessage], step: str = "") -> list[m.TurnItem]:
    """Turn items of messages: a person's and the model's text, each tool call and result.
    System messages are left out (the instructions come from the service itself). A message
    without an id is named by `step` and its place, which a retried step repeats."""
    items: list[m.TurnItem] = []
    for place, message in enumerate(messages):
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
                                    content=message.text))
    return items


class SessionMemory:
    """A session of the memory service as a LangGraph agent's memory."""

    def __init__(
        self, client: OpenBotMemory, session_id: str | None = None, *,
        wait: float | None = None,
    ) -> None:
        """`session_id` is the session of every run that does not name its own in
        `config["configurable"]["session_id"]`; `wait` (seconds) records each turn with
        `?wait=`, so the next turn sees what consolidation made of it."""
        self.client = client
        self.session_id = session_id
        self.wait = wait

    def session_of(self, config: RunnableConfig | None) -> str:
        configurable = (config or {}).get("configurable") or {}
        session = configurable.get("session_id") or self.session_id
        if not session:
            raise ValueError("no session: pass session_id, or configurable.session_id")
        return str(session)

    def instructions(self, config: RunnableConfig | None = None) -> SystemMessage | None:
        """The session's instructions now, as a system message (None when there are none)."""
        text = self.client.instructions(self.session_of(config)).memory
        return SystemMessage(content=text) if text.strip() else None

    def prompt(
        self, messages: Sequence[BaseMessage], config: RunnableConfig | None = None
    ) -> list[BaseMessage]:
        """What the model is sent: the instructions first, then the conversation."""
        system = self.instructions(config)
        return [system, *messages] if system is not None else list(messages)

    def record(
        self, messages: Sequence[BaseMessage], config: RunnableConfig | None = None,
        step: str = "",
    ) -> m.TurnView | None:
        """Record messages as one turn (None when none of them makes an item). Sent again
        with the same messages, the service answers the turn it already has."""
        items = items_of(messages, step)
        if not items:
            return None
        return self.client.record_turn(
            self.session_of(config), items, wait=self.wait)

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

        def forget(key: str, config: RunnableConfig) -> str:
            """Forget the fact under `key`: it is no longer true or wanted."""
            return self._change(config, m.Forget(key=key))

        def search_memory(query: str, config: RunnableConfig) -> str:
            """Search what is remembered, by words (Lucene syntax: words, "a phrase", OR)."""
            try:
                hits = self.client.search(query, session=self.session_of(config), limit=10)
            except OpenBotMemoryError as exc:
                return f"search failed: {exc.message}"
            if not hits:
                return "nothing found"
            return "\n".join(f"{hit.entry.key}: {hit.entry.content}" for hit in hits)

        return [StructuredTool.from_function(fn) for fn in (remember, forget, search_memory)]

    def _change(self, config: RunnableConfig, command: m.Command) -> str:
        try:
            view = self.client.update(self.session_of(config), lambda _: command)
        except OpenBotMemoryError as exc:
            return f"not changed: {exc.message}"
        return f"done (revision {view.session.revision})"

    # -- graph nodes -----------------------------------------------------------------------
    def record_node(self, state: MemoryState, config: RunnableConfig) -> dict[str, Any]:
        """Record the messages not recorded yet as this turn."""
        messages = state["messages"]
        done = state.get("recorded", 0)
        self.record(messages[done:], config, step=f"turn-from-{done}")
        return {"recorded": len(messages)}


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
    default three attempts on any error: sending the same ids again is safe)."""
    every_tool = [*memory.tools(), *tools]
    bound = model.bind_tools(every_tool)

    def agent(state: MemoryState, config: RunnableConfig) -> dict[str, list[AnyMessage]]:
        answer = bound.invoke(memory.prompt(state["messages"], config), config)
        assert isinstance(answer, AIMessage)
        return {"messages": [answer]}

    def route(state: MemoryState) -> str:
        return "tools" if tools_condition(dict(state)) == "tools" else "record"

    graph = StateGraph(MemoryState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(every_tool))
    graph.add_node("record", memory.record_node,
                   retry_policy=retry or RetryPolicy(max_attempts=3, retry_on=Exception))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", route, {"tools": "tools", "record": "record"})
    graph.add_edge("tools", "agent")
    graph.add_edge("record", END)
    return graph.compile(checkpointer=checkpointer)
