"""MCP at /mcp, driven by the official SDK's own client over real HTTP: the tools
and resources answer what the REST routes of the same meaning answer, a conflict is a tool
error that says to read again and retry, no token is a 401, and another member's private agent
entry is found neither by `search_memory` nor by `agent_memory`."""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import httpx
import httpx2
import mcp.types
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from app.api import bodies
from tests.api.test_agent_memory import agent_memory, agent_remember
from tests.api.test_metrics import scrape, value
from tests.conftest import Api, Graph, RunningServer, user

Body = dict[str, Any]
T = TypeVar("T")

TOOLS = {
    "read_memory", "remember", "forget", "configure", "instructions", "record_turn",
    "agent_memory", "remember_for_agent", "forget_for_agent", "search_memory", "fact_story",
}


@asynccontextmanager
async def connect(server: RunningServer, token: str) -> AsyncIterator[ClientSession]:
    """An initialized MCP client session over streamable HTTP, sending the Bearer token."""
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        streamable_http_client(f"{server.url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def run(server: RunningServer, token: str, work: Callable[[ClientSession], Awaitable[T]]) -> T:
    async def main() -> T:
        async with connect(server, token) as session:
            return await work(session)

    return asyncio.run(main())


def answer(result: mcp.types.CallToolResult) -> Any:
    """A tool's successful answer, parsed from its JSON text."""
    assert not result.is_error, result.content
    [content] = result.content
    assert isinstance(content, mcp.types.TextContent)
    return json.loads(content.text)


def error(result: mcp.types.CallToolResult) -> Body:
    """A tool error's JSON, after the SDK's `Error executing tool <name>: ` prefix."""
    assert result.is_error, result.content
    [content] = result.content
    assert isinstance(content, mcp.types.TextContent)
    assert content.text.startswith("Error executing tool "), content.text
    body: Body = json.loads(content.text[content.text.index("{"):])
    return body


def call(
    server: RunningServer, token: str, name: str, **arguments: Any
) -> mcp.types.CallToolResult:
    return run(server, token, lambda s: s.call_tool(name, arguments))


def test_the_tools_are_listed_each_described_for_a_model(
    server: RunningServer, api: Api, graph: Graph
) -> None:
    listed = run(server, api.token, lambda s: s.list_tools())
    tools = {tool.name: tool for tool in listed.tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description is not None
        assert len(tool.description) > 80, tool.name
    remember = tools["remember"].input_schema
    assert set(remember["required"]) == {
        "session_id", "expected", "revision", "key", "content", "kind"
    }
    assert set(tools["configure"].input_schema["required"]) == {
        "session_id", "expected", "revision"
    }
    assert set(tools["search_memory"].input_schema["required"]) == {"query"}
    query = tools["search_memory"].input_schema["properties"]["query"]
    assert (query["minLength"], query["maxLength"]) == (1, 500)  # as REST's q
    templates = run(server, api.token, lambda s: s.list_resource_templates())
    assert {t.uri_template for t in templates.resource_templates} == {
        "openbot://sessions/{session_id}/memory", "openbot://agents/{agent_id}/memory"
    }


def test_each_tool_schema_says_what_a_call_takes_as_the_rest_body_does(
    server: RunningServer, api: Api, graph: Graph
) -> None:
    # a client that checks a call against `tools/list` before sending it is refused nothing
    # the schema allowed: no other argument, a kind of the kinds, a key and content of the
    # lengths and characters the REST body's schema says
    listed = run(server, api.token, lambda s: s.list_tools())
    tools = {tool.name: tool.input_schema for tool in listed.tools}
    assert all(schema["additionalProperties"] is False for schema in tools.values()), tools
    rest = {"remember": bodies.RememberBody.model_json_schema()["properties"],
            "remember_for_agent": bodies.AgentRememberBody.model_json_schema()["properties"]}
    for tool, body in rest.items():
        taken = tools[tool]["properties"]
        for name in ("key", "content", "kind"):
            shown = {k: v for k, v in taken[name].items() if k not in ("title", "description")}
            assert shown == {k: v for k, v in body[name].items() if k != "title"}, (tool, name)
    assert tools["remember"]["properties"]["kind"]["enum"] == [
        "fact", "decision", "preference", "procedure", "hypothesis"
    ]


def test_fact_story_names_the_turn_each_cited_item_came_in(
    server: RunningServer, api: Api, graph: Graph
) -> None:
    # section 4: a fact's story reaches the turns it came from, over MCP as over GraphQL
    sid = api.session()["session"]["id"]  # the built-in model learns the budget
    turn = api.turn(sid, user("Our budget is 1500 EUR.", id="u-1"))["turn"]
    api.wait_idle(sid)
    story = answer(call(server, api.token, "fact_story", session_id=sid, key="budget"))
    [change] = story["changes"]
    assert [(c["id"], c["turn"]) for c in change["cites"]] == [("u-1", turn["id"])]
    graphql = api.graphql(
        "query($s: ID!) { session(id: $s) { memory { entry(key: \"budget\") {"
        " story { cites { item { id } turnId } } } } } }", s=sid,
    )["data"]["session"]["memory"]["entry"]["story"]
    assert graphql == [{"cites": [{"item": {"id": "u-1"}, "turnId": turn["id"]}]}]


def test_only_post_is_served_a_stream_or_a_session_is_405(
    server: RunningServer, api: Api
) -> None:
    # stateless: no stream for a GET to wait on, no session to DELETE
    headers = {"Authorization": f"Bearer {api.token}", "Accept": "text/event-stream"}
    for method in ("GET", "DELETE"):
        # streamed: a stream the server opened would be seen by its status, not waited on
        with httpx.stream(method, f"{server.url}/mcp", headers=headers, timeout=30) as answer:
            assert answer.status_code == 405, method
            assert json.loads(answer.read())["_tag"] == "MethodNotAllowed"
            assert answer.headers["allow"] == "POST"


def test_a_request_whose_id_is_no_string_or_integer_is_an_invalid_request(
    server: RunningServer, api: Api, graph: Graph
) -> None:
    # MCP: an id is a string or an integer; read as a notification, the call would run
    # unanswered and its client wait for ever. It is refused, and nothing runs.
    sid = api.session()["session"]["id"]
    before = api.view(sid)
    headers = {"Authorization": f"Bearer {api.token}",
               "Accept": "application/json, text/event-stream"}
    for bad in (None, True, 1.5, [1], {"n": 1}):
        call = {"jsonrpc": "2.0", "id": bad, "method": "tools/call",
                "params": {"name": "remember", "arguments": {
                    "session_id": sid, "expected": before["session"]["head"],
                    "revision": before["session"]["revision"], "key": "seat",
                    "content": "Window seat.", "kind": "preference"}}}
        answer = httpx.post(f"{server.url}/mcp", json=call, headers=headers, timeout=30)
        assert answer.status_code == 400, (bad, answer.text)
        body = answer.json()
        assert (body["jsonrpc"], body["id"], body["error"]) == ("2.0", None, {
            "code": -32600, "message": "Invalid Request: an id is a string or an integer"
        })
    assert api.view(sid) == before
    # a string or an integer id is answered
    for good in ("a-1", 7):
        listed = httpx.post(f"{server.url}/mcp", headers=headers, timeout=30,
                            json={"jsonrpc": "2.0", "id": good, "method": "tools/list"})
        assert listed.status_code == 200, listed.text
        assert listed.json()["id"] == good


def test_no_token_is_a_401_and_a_bad_token_too(server: RunningServer, graph: Graph) -> None:
    initialize = {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "0"}},
    }
    headers = {"Accept": "application/json, text/event-stream"}
    bare = httpx.post(f"{server.url}/mcp", json=initialize, headers=headers)
    assert bare.status_code == 401, bare.text
    assert bare.json()["_tag"] == "Unauthorized"
    assert bare.headers["www-authenticate"] == 'Bearer realm="openbot-memory"'
    bad = httpx.post(
        f"{server.url}/mcp", json=initialize,
        headers={**headers, "Authorization": "Bearer not-a-token"},
    )
    assert bad.status_code == 401, bad.text
    assert bad.headers["www-authenticate"] == 'Bearer realm="openbot-memory"'


def test_each_session_tool_answers_what_rest_answers(
    server: RunningServer, api: Api, graph: Graph
) -> None:
    sid = api.session()["session"]["id"]
    token = api.token

    read = answer(call(server, token, "read_memory", session_id=sid))
    assert read == api.view(sid)
    head, revision = read["session"]["head"], read["session"]["revision"]

    remembered = answer(call(
        server, token, "remember", session_id=sid, expected=head, revision=revision,
        key="budget", content="The trip budget is 1500 EUR.", kind="fact",
    ))
    assert remembered == api.view(sid)
    assert remembered["memory"]["entries"]["budget"]["content"] == "The trip budget is 1500 EUR."

    now = remembered["session"]
    configured = answer(call(
        server, token, "configure", session_id=sid, expected=now["head"],
        revision=now["revision"], generate=False,
    ))
    assert configured["memory"]["overrides"] == {"generate": False}
    assert configured["session"]["head"] == now["head"]  # S15: no history
    now = configured["session"]
    configured = answer(call(
        server, token, "configure", session_id=sid, expected=now["head"],
        revision=now["revision"], generate=None, use=False,
    ))
    assert configured["memory"]["overrides"] == {"use": False}  # null removed generate's
    now = configured["session"]
    configured = answer(call(
        server, token, "configure", session_id=sid, expected=now["head"],
        revision=now["revision"], use=True,
    ))
    assert configured["memory"]["overrides"] == {"use": True}

    shown = answer(call(server, token, "instructions", session_id=sid))
    assert shown == api.ok(api.get(f"/v1/sessions/{sid}/instructions"))
    assert shown["included"]["session"] == ["budget"]

    turn = answer(call(
        server, token, "record_turn", session_id=sid,
        items=[user("Hello there.", id="u-1"), {"type": "message", "role": "assistant",
                                                "content": "Hi."}],
    ))
    assert turn["turn"]["items"][0] == "u-1"
    recorded = api.ok(api.get(f"/v1/sessions/{sid}/turns/{turn['turn']['id']}"))
    assert turn["turn"] == recorded["turn"]
    api.wait_idle(sid)  # the turn's consolidation moves the head

    now = api.view(sid)["session"]
    forgotten = answer(call(
        server, token, "forget", session_id=sid, expected=now["head"],
        revision=now["revision"], key="budget",
    ))
    assert forgotten["memory"]["entries"]["budget"]["status"] == "retracted"
    assert forgotten == api.view(sid)

    story = answer(call(server, token, "fact_story", session_id=sid, key="budget"))
    assert story["key"] == "budget"
    assert [(c["op"], c["maker"]) for c in story["changes"]] == [
        ("forget", "person"), ("remember", "person")
    ]
    assert story["changes"][1]["cites"][0]["content"].startswith("Remember budget (fact)")
    missing = error(call(server, token, "fact_story", session_id=sid, key="nope"))
    assert missing["_tag"] == "NotFound"

    found = answer(call(server, token, "search_memory", query="budget"))
    assert found == api.ok(api.get("/v1/search", params={"q": "budget"}))
    assert [hit["entry"]["session"] for hit in found["hits"]] == [sid]
    for query in ("budget AND", "x" * 501, " "):
        bad = error(call(server, token, "search_memory", query=query))
        assert (bad["_tag"], bad["field"]) == ("ValidationError", "query"), query


def test_search_memory_pages_as_the_rest_search_does(
    server: RunningServer, api: Api, graph: Graph
) -> None:
    # MCP's search answers what REST's does, page for page, with `more`
    sid = api.session()["session"]["id"]
    for n in range(3):
        api.remember(sid, f"city-{n}", f"City number {n}.")
    for offset in (0, 2):
        found = answer(call(server, api.token, "search_memory", query="city", limit=2,
                            offset=offset))
        rest = api.ok(api.get("/v1/search", params={"q": "city", "limit": 2, "offset": offset}))
        assert found == rest
        assert found["more"] is (offset == 0)
    refused = error(call(server, api.token, "search_memory", query="city", offset=-1))
    assert (refused["_tag"], refused["field"]) == ("ValidationError", "offset")


def test_a_conflict_says_to_read_again_and_a_retry_passes(
    server: RunningServer, api: Api, graph: Graph
) -> None:
    sid = api.session()["session"]["id"]
    stale = api.view(sid)["session"]
    api.remember(sid, "seat", "Window seat.")  # someone else wrote meanwhile
    before = api.view(sid)

    async def work(session: ClientSession) -> tuple[mcp.types.CallToolResult, Any, Any]:
        args = {"session_id": sid, "key": "budget", "content": "1500 EUR.", "kind": "fact"}
        refused = await session.call_tool(
            "remember", {**args, "expected": stale["head"], "revision": stale["revision"]}
        )
        fresh = answer(await session.call_tool("read_memory", {"session_id": sid}))
        retried = await session.call_tool(
            "remember", {**args, "expected": fresh["session"]["head"],
                         "revision": fresh["session"]["revision"]},
        )
        return refused, fresh, answer(retried)

    def conflicts() -> float:
        return value(scrape(server.url), "openbot_memory_conflicts_total",
                     route="/mcp", error="SessionConflict")

    counted = conflicts()
    refused, fresh, retried = run(server, api.token, work)
    body = error(refused)
    assert body["_tag"] == "SessionConflict"
    assert conflicts() == counted + 1  # counted on /metrics, as REST's and GraphQL's are
    assert "read it again" in body["retry"].lower() or "read_memory" in body["retry"]
    assert "retry" in body["retry"]
    assert fresh == before  # nothing changed
    assert set(retried["memory"]["entries"]) == {"seat", "budget"}


def test_a_revision_wider_than_neo4js_integers_is_refused_as_input(
    server: RunningServer, api: Api
) -> None:
    # as over REST: a revision is a 64-bit integer; a wider one is bad input, and nothing changes
    sid = api.session()["session"]["id"]
    before = api.view(sid)
    result = call(
        server, api.token, "remember", session_id=sid, key="budget", content="1500 EUR.",
        kind="fact", expected=before["session"]["head"], revision=2**63,
    )
    assert result.is_error, result.content
    [content] = result.content
    assert isinstance(content, mcp.types.TextContent)
    assert "revision" in content.text
    assert api.view(sid) == before


def test_a_negative_version_is_refused_as_input(server: RunningServer, api: Api) -> None:
    # A10, as over REST and GraphQL: a version is 0 or more, so a negative `expected` is bad
    # input naming the argument (not an AgentConflict), and nothing changes
    agent = api.agent("desk")["id"]
    agent_remember(api, agent, "seat", "Ana prefers window seats.")
    before = agent_memory(api, agent)
    for name, arguments in (
        ("remember_for_agent", {"content": "Keep answers short.", "kind": "procedure"}),
        ("forget_for_agent", {}),
    ):
        result = call(server, api.token, name, agent_id=agent, expected=-1, key="seat",
                      **arguments)
        assert result.is_error, result.content
        [content] = result.content
        assert isinstance(content, mcp.types.TextContent)
        assert "expected" in content.text
        assert "AgentConflict" not in content.text
    assert agent_memory(api, agent) == before


def new_session(api: Api) -> tuple[str, str, Body]:
    """A new session of the caller: its id, its head and its view."""
    view: Body = api.view(api.session()["session"]["id"])
    return view["session"]["id"], view["session"]["head"], view


def test_arguments_the_schema_refuses_answer_a_validation_error_naming_them(
    server: RunningServer, api: Api
) -> None:
    # A refusal by a tool's input schema reads as a refusal by the service does: the REST
    # error body (`_tag` ValidationError and the argument at fault), and nothing changes.
    sid, head, _ = new_session(api)
    agent = api.agent("desk")["id"]
    before = (api.view(sid), agent_memory(api, agent))
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("remember", {"session_id": sid, "expected": head, "revision": 2**63, "key": "k",
                      "content": "c", "kind": "fact"}, "revision"),
        ("remember_for_agent", {"agent_id": agent, "expected": -1, "key": "k", "content": "c",
                                "kind": "procedure"}, "expected"),
        ("remember_for_agent", {"agent_id": agent, "expected": 0, "key": "k", "content": "c",
                                "kind": "procedure", "visibility": "secret"}, "visibility"),
        ("record_turn", {"session_id": sid, "items": []}, "items"),
        ("record_turn", {"session_id": sid, "items": [{"type": "message", "role": "user"}]},
         "items.0.content"),
        ("search_memory", {"query": "budget", "limit": 0}, "limit"),
    ]
    for name, arguments, field in cases:
        refused = error(call(server, api.token, name, **arguments))
        assert (refused["_tag"], refused["field"]) == ("ValidationError", field), (name, refused)
        assert refused["message"].startswith(f"{field}: "), refused
    assert (api.view(sid), agent_memory(api, agent)) == before


def test_an_argument_the_tool_does_not_take_is_refused_as_rest_refuses_a_field(
    server: RunningServer, api: Api
) -> None:
    # As a REST body with a field it does not take is 400 on that field, a tool call with an
    # argument its tool does not take is refused naming it, and nothing changes: a turn sent
    # as awaiting an approval is not recorded as completed
    sid, head, before = new_session(api)
    item = {"type": "message", "role": "user", "content": "Hold the booking."}
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("record_turn", {"session_id": sid, "items": [item], "status": "awaiting_approval"},
         "status"),
        ("remember", {"session_id": sid, "expected": head, "revision": 0, "key": "seat",
                      "content": "Window.", "kind": "preference", "visibility": "private"},
         "visibility"),
    ]
    for name, arguments, field in cases:
        refused = error(call(server, api.token, name, **arguments))
        assert (refused["_tag"], refused["field"]) == ("ValidationError", field), (name, refused)
    assert api.view(sid) == before


def test_an_argument_is_read_as_sent_as_rest_reads_a_field(
    server: RunningServer, api: Api
) -> None:
    # The text "null" is that text, not a missing argument: a search kept to a session named
    # "null" finds no such session (REST: 404), and a Forget about a person named "null" names
    # no person (REST: 400 on `about`) rather than retracting the shared entry of the key.
    # A number sent as text, a boolean for a number and a word or a number for a switch are
    # refused as a REST body refuses them, naming the argument; nothing changes.
    agent = api.agent("desk")["id"]
    agent_remember(api, agent, "seat", "Prefer window seats.", "preference")
    sid, head, _ = new_session(api)
    api.remember(sid, "budget", "The budget is 1500 EUR.")
    head = api.view(sid)["session"]["head"]
    before = (api.view(sid), agent_memory(api, agent))
    assert error(call(server, api.token, "search_memory", query="budget",
                      session_id="null"))["_tag"] == "NotFound"
    refused: list[tuple[str, dict[str, Any], str]] = [
        ("forget_for_agent", {"agent_id": agent, "expected": 1, "key": "seat", "about": "null"},
         "about"),
        ("remember", {"session_id": sid, "expected": head, "revision": "1", "key": "seat",
                      "content": "Window.", "kind": "preference"}, "revision"),
        ("remember", {"session_id": sid, "expected": head, "revision": True, "key": "seat",
                      "content": "Window.", "kind": "preference"}, "revision"),
        ("configure", {"session_id": sid, "expected": head, "revision": 1, "use": "yes"}, "use"),
        ("configure", {"session_id": sid, "expected": head, "revision": 1, "use": 1}, "use"),
    ]
    for name, arguments, field in refused:
        body = error(call(server, api.token, name, **arguments))
        assert (body["_tag"], body["field"]) == ("ValidationError", field), (name, body)
    assert (api.view(sid), agent_memory(api, agent)) == before
    # JSON has one number type: a whole number written 1.0 is the integer 1, as over REST
    assert answer(call(server, api.token, "remember", session_id=sid, expected=head,
                       revision=1.0, key="seat", content="Window.", kind="preference"))
    # a list sent as its JSON text is still read as the list
    item = {"id": "i-json", "type": "message", "role": "user", "content": "Hello."}
    recorded = answer(call(server, api.token, "record_turn", session_id=sid,
                           items=json.dumps([item])))
    assert recorded["turn"]["items"] == ["i-json"]


def modern_call(server: RunningServer, token: str, name: str, arguments: dict[str, Any]) -> Any:
    """A tool call as one self-contained POST of MCP's 2026-07-28 protocol (no handshake),
    whose JSON body is written here: `json.dumps` writes a lone surrogate as its escape."""
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": meta}}
    response = httpx.post(
        f"{server.url}/mcp", content=json.dumps(body), timeout=60,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json",
                 "Accept": "application/json, text/event-stream",
                 "MCP-Protocol-Version": "2026-07-28", "MCP-Method": "tools/call",
                 "MCP-Name": name},
    )
    assert response.status_code == 200, response.text
    return response.json()["result"]


def test_a_string_that_is_not_text_is_refused_naming_its_argument(
    server: RunningServer, api: Api
) -> None:
    # As over REST and GraphQL, an escaped half of a surrogate pair is refused as input
    # naming where it is, on the protocol whose JSON reader lets it through; nothing changes
    sid, head, before = new_session(api)
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("search_memory", {"query": "\ud800"}, "query"),
        ("remember", {"session_id": sid, "expected": head, "revision": 0, "key": "seat",
                      "content": "Window \udfff.", "kind": "preference"}, "content"),
        ("read_memory", {"session_id": "ses-\ud800"}, "session_id"),
    ]
    for name, arguments, field in cases:
        result = modern_call(server, api.token, name, arguments)
        assert result["isError"], result
        [content] = result["content"]
        refused = json.loads(content["text"][content["text"].index("{"):])
        assert (refused["_tag"], refused["field"]) == ("ValidationError", field), (name, refused)
    found = modern_call(server, api.token, "search_memory", {"query": "budget"})
    assert not found["isError"], found  # the same call with text is answered
    assert api.view(sid) == before


def test_a_facts_story_is_found_by_its_key_as_a_write_names_it(
    server: RunningServer, api: Api
) -> None:
    # S1: a write trims its key, so fact_story's lookup does too; an empty key is bad input
    sid = api.session()["session"]["id"]
    api.remember(sid, " budget ", "The trip budget is 1500 EUR.")
    story = answer(call(server, api.token, "fact_story", session_id=sid, key="  budget "))
    assert story["key"] == "budget"
    assert [(c["op"], c["key"], c["content"]) for c in story["changes"]] == [
        ("remember", "budget", "The trip budget is 1500 EUR.")
    ]
    empty = error(call(server, api.token, "fact_story", session_id=sid, key="  "))
    assert (empty["_tag"], empty["field"]) == ("ValidationError", "key")


def test_agent_tools_answer_what_rest_answers_and_conflict_like_it(
    server: RunningServer, api: Api, graph: Graph
) -> None:
    agent = api.agent("desk", shared=True)["id"]
    token = api.token
    assert answer(call(server, token, "agent_memory", agent_id=agent)) == {
        "entries": {}, "version": 0
    }
    memory = answer(call(
        server, token, "remember_for_agent", agent_id=agent, expected=0, key="seat",
        content="Ana prefers window seats.", kind="preference", about="ana",
        visibility="private",
    ))
    assert memory == agent_memory(api, agent)
    assert memory["entries"]["seat@ana"]["visibility"] == "private"  # listed as key@person
    stale = error(call(server, token, "forget_for_agent", agent_id=agent, expected=0, key="seat",
                       about="ana"))
    assert stale["_tag"] == "AgentConflict"
    assert "agent_memory" in stale["retry"]
    assert agent_memory(api, agent) == memory
    # without `about` a Forget names the shared entry of the key: there is none
    assert error(call(
        server, token, "forget_for_agent", agent_id=agent, expected=1, key="seat"
    ))["_tag"] == "AgentConflict"
    forgotten = answer(call(
        server, token, "forget_for_agent", agent_id=agent, expected=1, key="seat", about="ana"
    ))
    assert forgotten["entries"]["seat@ana"]["status"] == "retracted"
    assert forgotten["version"] == 2
    bad = error(call(
        server, token, "remember_for_agent", agent_id=agent, expected=2, key="x",
        content="A fact.", kind="fact",
    ))
    assert bad["_tag"] == "ValidationError"
    assert bad["field"] == "kind"


def test_another_members_private_entry_is_found_by_no_tool(
    server: RunningServer, api: Api, member: Api, platform: Api, graph: Graph
) -> None:
    agent = api.agent("shared planner", shared=True)["id"]
    agent_remember(api, agent, "seat", "Ana prefers window seats.", "preference",
                   about="ana", visibility="private")
    agent_remember(api, agent, "trains", "Book trains before flights.", "procedure")
    anas = api.session(agent)["session"]["id"]
    api.remember(anas, "window", "Ana wants the window seats.")

    bens_memory = answer(call(server, member.token, "agent_memory", agent_id=agent))
    assert set(bens_memory["entries"]) == {"trains"}
    assert "window" not in json.dumps(bens_memory)
    for query in ("window", "seats", "ana", "seat", "window OR trains"):
        found = answer(call(server, member.token, "search_memory", query=query))
        assert "window" not in json.dumps(found).lower(), (query, found)
    assert error(call(server, member.token, "read_memory", session_id=anas))["_tag"] == "NotFound"
    # ana and the service token find it
    assert len(answer(call(server, api.token, "search_memory", query="window"))["hits"]) == 2
    assert len(answer(call(server, platform.token, "search_memory", query="window"))["hits"]) == 2


def test_the_resources_are_the_memory_views(
    server: RunningServer, api: Api, member: Api, graph: Graph
) -> None:
    agent = api.agent("desk")["id"]
    sid = api.session(agent)["session"]["id"]
    api.remember(sid, "budget", "The trip budget is 1500 EUR.")
    agent_remember(api, agent, "trains", "Book trains before flights.")

    async def read(session: ClientSession, uri: str) -> Any:
        result = await session.read_resource(uri)
        [content] = result.contents
        assert isinstance(content, mcp.types.TextResourceContents)
        return json.loads(content.text)

    session_view = run(server, api.token, lambda s: read(s, f"openbot://sessions/{sid}/memory"))
    assert session_view == api.ok(api.get(f"/v1/sessions/{sid}/memory"))
    agent_view = run(server, api.token, lambda s: read(s, f"openbot://agents/{agent}/memory"))
    assert agent_view == agent_memory(api, agent)

    async def denied(session: ClientSession) -> str:
        try:
            await session.read_resource(f"openbot://sessions/{sid}/memory")
        except Exception as exc:  # the SDK raises the server's error for a failed read
            return str(exc)
        raise AssertionError("ben read ana's session memory")

    assert "NotFound" in run(server, member.token, denied)

    async def refused(session: ClientSession, uri: str) -> tuple[int, Any]:
        try:
            await session.read_resource(uri)
        except MCPError as exc:
            return exc.code, json.loads(exc.message)
        raise AssertionError(f"{uri} was read")

    # a resource the caller cannot read is the caller's fault, as an unknown URI is (-32602,
    # invalid params), with the REST body: not the server's (-32603, internal error)
    for uri in (f"openbot://sessions/{sid}/memory", "openbot://agents/agt-nope/memory"):
        code, body = run(server, member.token, functools.partial(refused, uri=uri))
        assert (code, body["_tag"]) == (-32602, "NotFound"), (uri, body)


def test_the_memory_rules_hold_for_tool_calls_as_for_rest(
    server: RunningServer, api: Api, graph: Graph
) -> None:
    # S10, A1, S14 through MCP: a credential is never stored, a fact is no kind of agent
    # memory, a Forget of a key the memory lacks is a conflict; each is the REST error body,
    # and nothing changes
    sid, head, before = new_session(api)
    agent = before["session"]["agent"]
    secret = error(call(server, api.token, "remember", session_id=sid, expected=head,
                        revision=0, key="wifi", content="the password is Xk9!mP2qLz",
                        kind="fact"))
    assert (secret["_tag"], secret["field"]) == ("ValidationError", "content"), secret
    fact = error(call(server, api.token, "remember_for_agent", agent_id=agent, expected=0,
                      key="budget", content="The budget is 1500 EUR.", kind="fact"))
    assert (fact["_tag"], fact["field"]) == ("ValidationError", "kind"), fact
    unknown = error(call(server, api.token, "forget", session_id=sid, expected=head,
                         revision=0, key="nope"))
    assert unknown["_tag"] == "SessionConflict", unknown
    assert api.view(sid) == before
    assert agent_memory(api, agent) == {"entries": {}, "version": 0}
    assert graph.value("MATCH (n) WHERE n:Change OR n:AgentChange RETURN count(n)") == 0
    assert "Xk9!mP2qLz" not in json.dumps(graph.rows("MATCH (n) RETURN properties(n) AS p"))
