"""A LangGraph agent whose memory is the OpenBot memory service.

Two turns of a trip planner: in the first the person tells their name and budget (the
service's consolidation keeps them) and the model remembers a seat preference with its
`remember` tool; before the second, the model is given the session's instructions, which
hold both. Runs offline with langchain-core's fake chat model scripted below; pass any
LangChain chat model that can call tools to `run` instead.

    ./scripts/serve &                                      # the service
    export OPENBOT_TOKEN=$(.venv/bin/openbot-memory token create --org acme --person ana)
    .venv/bin/python examples/langgraph_agent.py
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langgraph.checkpoint.memory import InMemorySaver
from openbot_memory_client import OpenBotMemory
from openbot_memory_client.langgraph import SessionMemory, memory_agent
from pydantic import Field


class ScriptedModel(GenericFakeChatModel):
    """langchain-core's fake chat model, answering from a script, that keeps what it was
    sent (to show the instructions it got) and takes tools as a real model would."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(
        self, tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def scripted() -> ScriptedModel:
    """The model's side of the two turns below."""
    seat = {"key": "seat", "content": "Ana prefers window seats.", "kind": "preference"}
    return ScriptedModel(messages=iter([
        AIMessage(content="", tool_calls=[{"name": "remember", "args": seat, "id": "call-1"}]),
        AIMessage(content="Noted, Ana: 1500 EUR, and a window seat."),
        AIMessage(content="Booked within 1500 EUR, window seat."),
    ]))


TURNS = [
    "Hi, my name is Ana. Our budget is 1500 EUR. Please remember I like window seats.",
    "Book the flight to Lisbon.",
]


def run(client: OpenBotMemory, model: BaseChatModel, session_id: str | None = None) -> str:
    """Play TURNS in one session (a new one unless given); the session's id."""
    if session_id is None:
        agent = client.create_agent("langgraph trip planner")
        session_id = client.create_session(agent.id).session.id
    # `wait=30`: each turn is recorded once its consolidation has run, so the next turn's
    # instructions hold what it kept.
    memory = SessionMemory(client, session_id, wait=30)
    graph = memory_agent(model, memory, checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": session_id}}
    for text in TURNS:
        state = graph.invoke({"messages": [HumanMessage(content=text)]}, config)
        print(f"user: {text}\nagent: {state['messages'][-1].text}")
    return session_id


def main() -> None:
    model = scripted()
    with OpenBotMemory() as client:
        session_id = run(client, model)
        print("instructions before turn 2:", model.seen[-1][0].text.replace("\n", " | "))
        print("remembered:", sorted(client.memory(session_id).entries))


if __name__ == "__main__":
    main()
