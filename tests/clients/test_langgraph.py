"""The LangGraph example (examples/langgraph_agent.py), offline with langchain-core's fake chat
model, against the real service: what turn 1 told is in the instructions the model gets in
turn 2, the model's tools change memory, and a step that runs again records nothing twice."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from types import ModuleType
from typing import Any

import httpx
import pytest
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import RetryPolicy
from openbot_memory_client import (
    AsyncOpenBotMemory,
    OpenBotMemory,
    SessionConflict,
    Unreachable,
    ValidationError,
)
from openbot_memory_client.langgraph import (
    MemoryState,
    SessionMemory,
    item_id,
    items_of,
    memory_agent,
)

from tests.conftest import ROOT, Graph, RunningServer, free_port

TURNS = """query($id: ID!) { session(id: $id) { turns { nodes { id itemIds } }
  items { nodes { id } } } }"""


def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "langgraph_agent", ROOT / "examples" / "langgraph_agent.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # pydantic resolves the module's annotations there
    spec.loader.exec_module(module)
    return module


def turns_of(client: OpenBotMemory, session_id: str) -> tuple[list[list[str]], list[str]]:
    """The session's turns (their item ids) and every item id of its timeline."""
    data = client.graphql(TURNS, {"id": session_id})["session"]
    return ([turn["itemIds"] for turn in data["turns"]["nodes"]],
            [item["id"] for item in data["items"]["nodes"]])


def test_the_example_agent_remembers_across_turns(client: OpenBotMemory, graph: Graph) -> None:
    agent = example()
    model = agent.scripted()
    sid = agent.run(client, model)

    # Turn 1's model call got no instructions (nothing was known), turn 2's got them: the
    # budget and name that consolidation kept from turn 1, and the seat its tool remembered.
    first, *_, last = model.seen
    assert not isinstance(first[0], SystemMessage)
    assert isinstance(last[0], SystemMessage)
    assert "1500 EUR" in last[0].text
    assert "Ana prefers window seats." in last[0].text
    entries = client.memory(sid).entries
    assert entries["seat"].kind == "preference"
    assert "budget" in entries

    # Each turn recorded once, its items in order: the person, the tool call, its result and
    # the answer; then the second turn's person and answer.
    turns, items = turns_of(client, sid)
    assert [len(turn) for turn in turns] == [4, 2]
    for turn in turns:
        assert all(one.startswith("lg-") for one in turn)
    assert [one for turn in turns for one in turn] == [i for i in items if i.startswith("lg-")]


def test_a_retried_record_step_records_the_turn_once(
    client: OpenBotMemory, server: RunningServer, ana_token: str, graph: Graph
) -> None:
    agent = example()
    sid = client.create_session(client.create_agent("a").id).session.id
    lost = {"answers": 1}

    def lose_the_answer(response: httpx.Response) -> None:
        # The turn is recorded, but its answer never reaches the step: the step fails.
        if response.request.method == "POST" and response.url.path.endswith("/turns") \
                and lost["answers"] > 0:
            lost["answers"] -= 1
            raise httpx.ReadError("the answer was lost", request=response.request)

    flaky = OpenBotMemory(server.url, ana_token,
                          http_client=httpx.Client(event_hooks={"response": [lose_the_answer]}))
    memory = SessionMemory(flaky, sid)
    config: Any = {"configurable": {"thread_id": "t"}}

    # Retried in place by the step's retry policy.
    graph_ = memory_agent(agent.scripted(), memory, checkpointer=InMemorySaver(),
                          retry=RetryPolicy(max_attempts=3, initial_interval=0.01))
    graph_.invoke({"messages": [HumanMessage(content=agent.TURNS[0])]}, config)
    assert lost["answers"] == 0
    turns, _ = turns_of(client, sid)
    assert [len(turn) for turn in turns] == [4]

    # Not retried by the step: the run fails, and resuming from the checkpoint runs it again.
    lost["answers"] = 1
    once = memory_agent(agent.scripted(), memory, checkpointer=InMemorySaver(),
                        retry=RetryPolicy(max_attempts=1))
    other: Any = {"configurable": {"thread_id": "u"}}
    with pytest.raises(Unreachable) as lost_answer:
        once.invoke({"messages": [HumanMessage(content="Hello again.", id="m-hello")]}, other)
    assert isinstance(lost_answer.value.__cause__, httpx.ReadError)
    once.invoke(None, other)
    flaky.http.close()
    turns, items = turns_of(client, sid)
    assert [len(turn) for turn in turns] == [4, 4]
    recorded = [one for one in items if one.startswith("lg-")]  # not the tool's memory edits
    assert len(recorded) == len(set(recorded)) == 8


def lost_answer(client: OpenBotMemory) -> tuple[str, list[AnyMessage]]:
    """A session whose first exchange (a tool call among it) is recorded as the thread's
    record step would have, though the step never heard so (the process died), and the
    exchange."""
    sid = client.create_session(client.create_agent("a").id).session.id
    first: list[AnyMessage] = [
        HumanMessage(content="Any seat I asked for?", id="h-1"),
        AIMessage(content="", id="a-1", tool_calls=[
            {"name": "search_memory", "args": {"query": "seat"}, "id": "call-1"}]),
        ToolMessage(content="nothing found", tool_call_id="call-1", id="t-1"),
        AIMessage(content="None yet.", id="a-2"),
    ]
    client.record_turn(sid, items_of(first))
    return sid, first


def test_a_run_after_a_lost_answer_records_only_what_the_session_lacks(
    client: OpenBotMemory, graph: Graph
) -> None:
    # The thread runs on with new input (not resumed): its record step sends the first
    # exchange again with the new messages, a turn the service refuses (some of its item ids
    # are used); the step records the new messages alone, and the thread goes on
    agent = example()
    sid, first = lost_answer(client)
    model = agent.ScriptedModel(messages=iter([AIMessage(content="A window seat, then.")]))
    graph_ = memory_agent(model, SessionMemory(client, sid))
    state = graph_.invoke({"messages": [*first, HumanMessage(content="Window.", id="h-2")]})
    ids = [item.id for item in items_of(state["messages"])]
    turns, items = turns_of(client, sid)
    assert items == ids
    assert turns == [ids[:4], ids[4:]]

    # Ids the session holds under other words are not that turn: the refusal stands
    model = agent.ScriptedModel(messages=iter([AIMessage(content="An aisle seat.")]))
    other = memory_agent(model, SessionMemory(client, sid))
    with pytest.raises(SessionConflict, match="item ids already used"):
        other.invoke({"messages": [HumanMessage(content="Aisle.", id="h-2")]})
    assert turns_of(client, sid) == (turns, items)


def test_a_run_after_a_lost_answer_records_only_what_the_session_lacks_async(
    client: OpenBotMemory, server: RunningServer, ana_token: str, graph: Graph
) -> None:
    agent = example()
    sid, first = lost_answer(client)
    model = agent.ScriptedModel(messages=iter([AIMessage(content="A window seat, then.")]))

    async def run() -> dict[str, Any]:
        async with AsyncOpenBotMemory(server.url, ana_token) as aclient:
            graph_ = memory_agent(model, SessionMemory(aclient, sid))
            return await graph_.ainvoke(
                {"messages": [*first, HumanMessage(content="Window.", id="h-2")]})

    state = asyncio.run(run())
    ids = [item.id for item in items_of(state["messages"])]
    turns, items = turns_of(client, sid)
    assert items == ids
    assert turns == [ids[:4], ids[4:]]


def test_item_ids_are_stable_and_valid() -> None:
    long_id = "run--" + "x" * 100 + "/?"
    assert item_id(long_id) == item_id(long_id) != item_id(long_id, 1)
    assert len(item_id(long_id)) <= 64
    messages = [HumanMessage(content="hi", id="a"), HumanMessage(content="again")]
    assert [i.id for i in items_of(messages, "s")] == [item_id("a"), item_id("s#1")]


def test_the_results_of_the_tools_apps_names_are_recorded_as_that_apps(
    client: OpenBotMemory, graph: Graph
) -> None:
    # A4: a tool the developer names as an App's gives outside data; the service records its
    # results as that App's, the other tools' results as the agent's own
    sid = client.create_session(client.create_agent("a").id).session.id
    memory = SessionMemory(client, sid, apps={"fetch_page": "web"})
    memory.record([
        HumanMessage(content="What does the page say?", id="h-1"),
        AIMessage(content="", id="a-1", tool_calls=[
            {"name": "fetch_page", "args": {"url": "https://example.com"}, "id": "call-1"},
            {"name": "search_memory", "args": {"query": "page"}, "id": "call-2"}]),
        ToolMessage(content="Ana prefers aisle seats.", tool_call_id="call-1", id="t-1",
                    name="fetch_page"),
        ToolMessage(content="nothing found", tool_call_id="call-2", id="t-2",
                    name="search_memory"),
    ])
    items = client.graphql(
        "query($id: ID!) { session(id: $id) { items { nodes { type app } } } }", {"id": sid}
    )["session"]["items"]["nodes"]
    assert [(i["type"], i["app"]) for i in items if i["type"] == "tool_result"] == [
        ("tool_result", "web"), ("tool_result", None)]


def test_the_agent_runs_async_with_the_async_client(
    client: OpenBotMemory, server: RunningServer, ana_token: str, graph: Graph
) -> None:
    agent = example()
    model = agent.scripted()
    sid = client.create_session(client.create_agent("a").id).session.id

    async def run() -> None:
        async with AsyncOpenBotMemory(server.url, ana_token) as aclient:
            memory = SessionMemory(aclient, wait=30)
            graph_ = memory_agent(model, memory, checkpointer=InMemorySaver())
            config: Any = {"configurable": {"thread_id": "a", "session_id": sid}}
            for text in agent.TURNS:
                await graph_.ainvoke({"messages": [HumanMessage(content=text)]}, config)

    asyncio.run(run())
    last = model.seen[-1]
    assert isinstance(last[0], SystemMessage)
    assert "1500 EUR" in last[0].text
    assert "Ana prefers window seats." in last[0].text
    turns, _ = turns_of(client, sid)
    assert [len(turn) for turn in turns] == [4, 2]


def test_search_memory_answers_what_is_remembered_not_what_was_forgotten(
    client: OpenBotMemory, graph: Graph
) -> None:
    sid = client.create_session(client.create_agent("a").id).session.id
    client.remember(sid, "seat", "Ana prefers window seats.", "preference")
    client.remember(sid, "car", "Ana wants a rental car with window tint.", "preference")
    client.forget(sid, "car")
    [search] = [tool for tool in SessionMemory(client, sid).tools()
                if tool.name == "search_memory"]
    assert search.invoke({"query": "window"}) == "seat: Ana prefers window seats."
    assert search.invoke({"query": "rental"}) == "nothing found"


def test_recording_messages_without_ids_asks_for_a_step(
    client: OpenBotMemory, graph: Graph
) -> None:
    # SPEC 5: item ids are unique in a session; a message without an id takes one from the
    # step it is recorded in, so two turns of such messages are two steps
    sid = client.create_session(client.create_agent("a").id).session.id
    memory = SessionMemory(client, sid)
    with pytest.raises(ValueError, match="step"):
        memory.record([HumanMessage(content="Hello.")])
    for step in ("first", "second"):
        memory.record([HumanMessage(content=f"Hello, {step} time.")], step=step)
    turns, _ = turns_of(client, sid)
    assert [len(turn) for turn in turns] == [1, 1]


def test_the_record_step_sends_a_refused_turn_once(
    server: RunningServer, ana_token: str, client: OpenBotMemory, graph: Graph
) -> None:
    # The record step's default policy sends a turn again only where that may mend it (a
    # lost answer, an unavailable service): a turn the service refuses fails the run at once
    agent = example()
    sid = client.create_session(client.create_agent("a").id).session.id
    posted: list[int] = []

    def count_turns(response: httpx.Response) -> None:
        if response.request.method == "POST" and response.url.path.endswith("/turns"):
            posted.append(response.status_code)

    with OpenBotMemory(server.url, ana_token, http_client=httpx.Client(
            event_hooks={"response": [count_turns]})) as counted:
        graph_ = memory_agent(agent.scripted(), SessionMemory(counted, sid))
        too_long = "x" * 100_001  # more than an item may hold
        with pytest.raises(ValidationError) as refused:
            graph_.invoke({"messages": [HumanMessage(content=too_long, id="m-long")]})
    assert refused.value.field == "items.0.content"
    assert posted == [400]
    assert turns_of(client, sid)[0] == []


def test_a_graph_that_removes_messages_records_each_new_message_once(
    client: OpenBotMemory, graph: Graph
) -> None:
    # A graph that keeps only the last message between turns (a summarising pattern) records
    # each turn's own messages: what is recorded is known by message id, not by place
    sid = client.create_session(client.create_agent("a").id).session.id
    memory = SessionMemory(client, sid)

    def answer(state: MemoryState) -> dict[str, list[AnyMessage]]:
        asked = state["messages"][-1]
        return {"messages": [AIMessage(content=f"re: {asked.text}", id=f"a-{asked.id}")]}

    def trim(state: MemoryState) -> dict[str, list[RemoveMessage]]:
        return {"messages": [RemoveMessage(id=str(m.id)) for m in state["messages"][:-1]]}

    builder = StateGraph(MemoryState)
    builder.add_node("answer", answer)
    builder.add_node("record", memory.record_node)
    builder.add_node("trim", trim)
    builder.add_edge(START, "answer")
    builder.add_edge("answer", "record")
    builder.add_edge("record", "trim")
    builder.add_edge("trim", END)
    agent = builder.compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "trimmed"}}
    for n in (1, 2, 3):
        agent.invoke({"messages": [HumanMessage(content=f"Hello {n}.", id=f"h{n}")]}, config)
    turns, _ = turns_of(client, sid)
    assert turns == [[item_id(f"h{n}"), item_id(f"a-h{n}")] for n in (1, 2, 3)]


def test_a_tool_call_the_service_does_not_answer_is_answered_to_the_model() -> None:
    # With the service down, each memory tool answers the model what failed: the run goes on
    # and every tool call has its ToolMessage, sync and async
    port = free_port()  # nothing listens there
    asked = [HumanMessage(content="Remember my seat.", id="h-1"), AIMessage(
        content="", id="a-1", tool_calls=[
            {"name": "remember", "id": "call-1",
             "args": {"key": "seat", "content": "Window.", "kind": "preference"}},
            {"name": "search_memory", "id": "call-2", "args": {"query": "seat"}}])]

    def tools_of(memory: SessionMemory) -> CompiledStateGraph[Any, Any, Any, Any]:
        builder = StateGraph(MemoryState)
        builder.add_node("tools", ToolNode(memory.tools()))
        builder.add_edge(START, "tools")
        builder.add_edge("tools", END)
        return builder.compile()

    def answers(state: dict[str, Any]) -> dict[str, str]:
        return {message.tool_call_id: message.text for message in state["messages"]
                if isinstance(message, ToolMessage)}

    down = f"no answer from 127.0.0.1:{port}: could not connect"
    with OpenBotMemory(f"http://127.0.0.1:{port}", "token") as client:
        told = answers(tools_of(SessionMemory(client, "ses-1")).invoke({"messages": asked}))
    assert told["call-1"].startswith(f"not changed: {down}")
    assert told["call-2"].startswith(f"search failed: {down}")

    async def run() -> dict[str, str]:
        async with AsyncOpenBotMemory(f"http://127.0.0.1:{port}", "token") as aclient:
            graph_ = tools_of(SessionMemory(aclient, "ses-1"))
            return answers(await graph_.ainvoke({"messages": asked}))

    told = asyncio.run(run())
    assert told["call-1"].startswith(f"not changed: {down}")
    assert told["call-2"].startswith(f"search failed: {down}")


def test_search_memory_finds_what_is_remembered_behind_many_forgotten_matches(
    client: OpenBotMemory, graph: Graph
) -> None:
    # the tool asks for the entries remembered now: ten forgotten entries that rank above the
    # one remembered do not hide it
    sid = client.create_session(client.create_agent("a").id).session.id
    for n in range(10):
        client.remember(sid, f"old{n}", "seat seat seat, once", "fact")
        client.forget(sid, f"old{n}")
    client.remember(sid, "flights", "Ana prefers a window seat on long flights.", "preference")
    first = client.search("seat", session=sid, limit=10)
    assert {hit.entry.key for hit in first} == {f"old{n}" for n in range(10)}  # they rank first
    [search] = [tool for tool in SessionMemory(client, sid).tools()
                if tool.name == "search_memory"]
    assert search.invoke({"query": "seat"}) == (
        "flights: Ana prefers a window seat on long flights.")
