"""A private agent entry and the shared one of its key are two entries, named alike on every path
(SPEC A8, A9, A10, A11, section 6), a source the reader may not reach is left out everywhere
(A3, A9), and a Forget of a retracted entry changes nothing (A10).

Ana keeps a private `seat`, ben then a shared `seat`: ana sees both, as `seat@ana` and `seat`,
in REST, GraphQL, MCP, search, her turns' instructions and the log; `Forget` names which one
with `about`.
"""

from __future__ import annotations

from typing import Any

from tests.api.test_agent_memory import (
    agent_changes,
    agent_command,
    agent_log,
    agent_memory,
    assert_error,
    forget,
    instructions,
    post_agent,
    remember,
)
from tests.api.test_learning import wait_learned
from tests.api.test_mcp import answer, call
from tests.conftest import Api, Graph, RunningServer, flat, user

Body = dict[str, Any]

MEMORY = """
query($a: ID!) {
  agent(id: $a) {
    memory {
      version
      entries { nodes {
        key listedAs visibility about content status
        sources { session { id } item { id } }
        changes { nodes { listedAs sources { session { id } item { id } } } }
      } }
      log { nodes { version keys } }
    }
  }
}
"""

SHOWN = """
query($s: ID!) { session(id: $s) { turns { nodes { shown { agent { key listedAs } } } } } }
"""

SEARCH = """
query($q: String!, $a: ID!) {
  search(query: $q, agentId: $a) {
    hits { key agentEntry { key listedAs sources { session { id } item { id } } } }
  }
}
"""

FORGET = """
mutation($a: ID!, $v: Int!, $k: String!, $about: String) {
  forgetForAgent(agentId: $a, expected: $v, key: $k, about: $about) {
    version entries { nodes { listedAs status } }
  }
}
"""


def graphql_memory(client: Api, agent: str) -> Body:
    found = client.graphql(MEMORY, a=agent)
    assert "errors" not in found, found
    memory: Body = flat(found["data"]["agent"]["memory"])
    return memory


def two_seats(api: Api, member: Api) -> str:
    """A shared agent where ana keeps a private `seat`, and ben then a shared one."""
    agent: str = api.agent("shared planner", shared=True)["id"]
    api.ok(post_agent(api, agent, 0, remember(
        "seat", "Ana prefers window seats.", "preference", about="ana", visibility="private")))
    member.ok(post_agent(member, agent, 1, remember(
        "seat", "Members pick their seats at booking.", "decision")))
    return agent


def test_a_private_entry_and_the_shared_one_of_its_key_are_two_entries_on_every_path(
    server: RunningServer, api: Api, member: Api, graph: Graph
) -> None:
    agent = two_seats(api, member)

    # SPEC section 6: every reader's map lists a private entry as `key@person`, its owner's
    # view included; the entry's own `key` stays the key
    anas = agent_memory(api, agent)
    assert list(anas["entries"]) == ["seat", "seat@ana"]  # newest first (A10)
    assert anas["entries"]["seat@ana"]["key"] == "seat"
    assert anas["entries"]["seat@ana"]["content"] == "Ana prefers window seats."
    assert anas["entries"]["seat@ana"]["visibility"] == "private"
    assert anas["entries"]["seat"]["key"] == "seat"
    assert anas["entries"]["seat"]["content"] == "Members pick their seats at booking."
    assert list(agent_memory(member, agent)["entries"]) == ["seat"]  # A9: not ana's
    # MCP answers the same map
    assert answer(call(server, api.token, "agent_memory", agent_id=agent)) == anas

    # A8: both reach ana's turns, newest first, named as the map names them
    sid = api.session(agent)["session"]["id"]
    api.ok(api.command(sid, {"_tag": "Configure", "generate": False}))  # nothing learns
    shown = instructions(api, sid)
    assert shown["included"]["agent"] == ["seat", "seat@ana"]
    assert "Members pick their seats at booking." in shown["memory"]
    assert "Ana prefers window seats." in shown["memory"]
    turn = api.turn(sid, user("Book me a seat."))["turn"]
    assert turn["shownAgent"] == ["seat", "seat@ana"]
    found = api.graphql(SHOWN, s=sid)
    assert "errors" not in found, found
    [shown_turn] = flat(found["data"]["session"]["turns"])
    assert [(e["key"], e["listedAs"]) for e in shown_turn["shown"]["agent"]] == [
        ("seat", "seat"), ("seat", "seat@ana")]

    # A11: the log names the entry each change touched, for the readers who may see it
    assert [(c["version"], c["keys"]) for c in agent_log(api, agent)] == [
        (1, ["seat@ana"]), (2, ["seat"])]
    assert [(c["version"], c["keys"]) for c in agent_log(member, agent)] == [(2, ["seat"])]

    # GraphQL: two entries, each saying the name it is listed under; the log likewise
    memory = graphql_memory(api, agent)
    assert sorted((e["listedAs"], e["key"], e["visibility"]) for e in memory["entries"]) == [
        ("seat", "seat", "SHARED"), ("seat@ana", "seat", "PRIVATE")]
    assert [(c["version"], c["keys"]) for c in memory["log"]] == [
        (1, ["seat@ana"]), (2, ["seat"])]
    assert {e["listedAs"]: [c["listedAs"] for c in e["changes"]]
            for e in memory["entries"]} == {"seat": ["seat"], "seat@ana": ["seat@ana"]}

    # search: two hits, each under the name the view lists it under
    found = api.graphql(SEARCH, q="seat", a=agent)
    assert "errors" not in found, found
    hits = found["data"]["search"]["hits"]
    assert sorted((h["key"], h["agentEntry"]["listedAs"]) for h in hits) == [
        ("seat", "seat"), ("seat@ana", "seat@ana")]
    rest = api.ok(api.get("/v1/search", params={"q": "seat", "agent": agent}))["hits"]
    assert sorted((h["listedAs"], h["entry"]["key"], h["entry"]["content"]) for h in rest) == [
        ("seat", "seat", "Members pick their seats at booking."),
        ("seat@ana", "seat", "Ana prefers window seats.")]
    # ben's hits name the shared entry only
    bens = member.ok(member.get("/v1/search", params={"q": "seat", "agent": agent}))["hits"]
    assert [h["listedAs"] for h in bens] == ["seat"]

    # SPEC section 6: Forget without `about` is the shared entry; with `about` the private one
    changes = agent_changes(graph)
    forgotten = api.ok(agent_command(api, agent, forget("seat")))
    assert forgotten["version"] == 3
    assert forgotten["entries"]["seat"]["status"] == "retracted"
    assert forgotten["entries"]["seat@ana"]["status"] == "active"
    assert agent_memory(member, agent)["entries"]["seat"]["status"] == "retracted"
    found = api.graphql(FORGET, a=agent, v=3, k="seat", about="ana")
    assert "errors" not in found, found
    assert flat(found["data"]["forgetForAgent"]) == {
        "version": 4,
        "entries": [{"listedAs": "seat", "status": "RETRACTED"},
                    {"listedAs": "seat@ana", "status": "RETRACTED"}],
    }
    assert agent_changes(graph) == changes + 2
    assert [c["keys"] for c in agent_log(api, agent, after=2)] == [["seat"], ["seat@ana"]]
    # ben cannot name ana's private entry
    assert_error(post_agent(member, agent, 4, forget("seat", about="ana")), 409, "AgentConflict")


def test_a_source_in_another_members_session_is_left_out_on_every_path(
    server: RunningServer, api: Api, member: Api, platform: Api
) -> None:
    # A3, A9, SPEC section 6: ben sees the shared entry learned in ana's session, not its source
    agent = api.agent("shared planner", shared=True)["id"]
    sid = api.session(agent)["session"]["id"]
    api.turn(sid, user("Always book trains before flights.", id="i-01"))
    [job] = wait_learned(api, agent, [sid])  # the built-in helper model keeps the procedure
    assert job["status"] == "succeeded", job
    [(key, entry)] = agent_memory(api, agent)["entries"].items()
    assert entry["visibility"] == "shared"
    assert entry["sources"] == [{"session": sid, "item": "i-01"}]  # ana reaches her session
    assert agent_memory(platform, agent)["entries"][key]["sources"] == entry["sources"]

    # REST and MCP: the entry stays, without the source
    bens = agent_memory(member, agent)
    assert bens["entries"][key] == {**entry, "sources": []}
    assert answer(call(server, member.token, "agent_memory", agent_id=agent)) == bens

    # GraphQL: the entry and its changes list no source (not a source of nulls)
    [node] = graphql_memory(member, agent)["entries"]
    assert node["sources"] == []
    assert [c["sources"] for c in node["changes"]] == [[]]
    [anas_node] = graphql_memory(api, agent)["entries"]
    assert anas_node["sources"] == [{"session": {"id": sid}, "item": {"id": "i-01"}}]

    # search, REST and GraphQL
    [hit] = member.ok(member.get("/v1/search", params={"q": "trains", "agent": agent}))["hits"]
    assert hit["entry"]["sources"] == []
    found = member.graphql(SEARCH, q="trains", a=agent)
    assert "errors" not in found, found
    [graph_hit] = found["data"]["search"]["hits"]
    assert graph_hit["agentEntry"]["sources"] == []


def test_a_forget_of_a_retracted_entry_changes_nothing(api: Api, graph: Graph) -> None:
    # A10: it makes no version and no log row, and answers the current view
    agent = api.agent()["id"]
    api.ok(post_agent(api, agent, 0, remember("tone", "Replies are short.")))
    forgotten = api.ok(post_agent(api, agent, 1, forget("tone")))
    assert forgotten["version"] == 2
    changes = agent_changes(graph)
    again = post_agent(api, agent, 2, forget("tone"))
    assert again.status_code == 200, again.text
    assert again.json() == forgotten
    assert agent_memory(api, agent) == forgotten
    assert agent_changes(graph) == changes
    assert [c["version"] for c in agent_log(api, agent)] == [1, 2]
    # the version still guards: a stale one is a conflict, as before
    assert_error(post_agent(api, agent, 1, forget("tone")), 409, "AgentConflict")
