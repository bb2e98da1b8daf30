"""A12: promoting a subagent session through HTTP.

`POST /v1/sessions/:id/promote {name?}` on a `subagent` session answers 201 `{"agent",
"memory"}`: a new agent whose memory holds that session's active lasting entries (A1 kinds),
each keeping its sources and linked to the session change and entry it came from, in one
version made by `promotion`. Shapes as in notes/learning-contract.md.
"""

from __future__ import annotations

from typing import Any

from tests.api.test_agent_memory import agent_log, agent_memory, assert_error
from tests.api.test_learning import (
    CONSOLIDATE,
    answer,
    change,
    helper_is_stub,
    tool_result,
)
from tests.conftest import Api, Graph, flat, user
from tests.openai_stub import OpenAIStub

Body = dict[str, Any]

LASTING = ("decision", "preference", "procedure")


def subagent(client: Api, agent: str | None = None) -> tuple[str, str]:
    """A chat session and a subagent session started from it: (parent id, subagent id)."""
    agent = agent or client.agent()["id"]
    parent = client.session(agent)["session"]["id"]
    child = client.session(agent, kind="subagent", parent=parent)["session"]
    assert child["kind"] == "subagent"
    return parent, child["id"]


def fill(client: Api, sid: str) -> Body:
    """Session entries of every kind, one lasting entry edited twice and a retracted
    procedure; the session memory view afterwards."""
    client.remember(sid, "budget", "The trip budget is 1500 EUR.", "fact")
    client.remember(sid, "airline", "We fly with Lufthansa.", "decision")
    client.remember(sid, "seat", "Ana prefers window seats.", "preference")
    client.remember(sid, "checkin", "Check in online 24 hours before.", "procedure")
    client.remember(sid, "checkin", "Check in online 30 hours before.", "procedure")
    client.remember(sid, "delay", "The flight may be delayed.", "hypothesis")
    client.remember(sid, "visa", "Apply for a visa first.", "procedure")
    client.ok(client.command(sid, {"_tag": "Forget", "key": "visa"}))
    memory: Body = client.ok(client.get(f"/v1/sessions/{sid}/memory"))
    assert memory["entries"]["visa"]["status"] == "retracted"
    return memory


def agents_in_graph(graph: Graph) -> int:
    return int(graph.value("MATCH (a:Agent) RETURN count(a)"))


def test_promotion_carries_only_the_active_lasting_entries_with_their_sources(
    api: Api, graph: Graph
) -> None:
    # A12, A1, A3, A11
    _, sid = subagent(api)
    session_memory = fill(api, sid)
    response = api.post(f"/v1/sessions/{sid}/promote", {"name": "check-in helper"})
    promoted = api.ok(response, 201)

    new = promoted["agent"]
    assert new["name"] == "check-in helper"
    assert set(new) >= {"id", "name", "shared", "model"}
    memory = promoted["memory"]
    assert memory["version"] == 1
    assert sorted(memory["entries"]) == ["airline", "checkin", "seat"]
    for key, entry in memory["entries"].items():
        source = session_memory["entries"][key]
        assert entry["content"] == source["content"]
        assert entry["kind"] == source["kind"]
        assert entry["kind"] in LASTING
        assert entry["status"] == "active"
        assert entry["visibility"] == "shared"
        assert entry["sources"] == [{"session": sid, "item": item} for item in source["sources"]]
        assert entry["sources"] != []
    assert memory["entries"]["checkin"]["content"] == "Check in online 30 hours before."
    assert agent_memory(api, new["id"]) == memory  # what the answer said is what is stored

    [logged] = agent_log(api, new["id"])
    assert logged["version"] == 1
    assert logged["maker"] == "promotion"
    assert logged["person"] == "ana"
    assert logged["keys"] == ["airline", "checkin", "seat"]

    # the session keeps its memory, facts and hypotheses included
    after = api.ok(api.get(f"/v1/sessions/{sid}/memory"))
    assert after["entries"] == session_memory["entries"]

    # the graph: each agent change comes from the session's change and entry
    rows = graph.rows(
        "MATCH (c:AgentChange {agent: $agent}) "
        "OPTIONAL MATCH (c)-[:PROMOTED_FROM]->(ch:Change)-[:OF_ENTRY]->(e:Entry) "
        "WHERE (c)-[:PROMOTED_FROM]->(e) "
        "RETURN c.key AS key, c.maker AS maker, ch.key AS change, ch.content AS content, "
        "e.session AS session, e.key AS entry ORDER BY key",
        agent=new["id"],
    )
    assert rows == [
        {"key": key, "maker": "promotion", "change": key,
         "content": session_memory["entries"][key]["content"], "session": sid, "entry": key}
        for key in ["airline", "checkin", "seat"]
    ]
    assert graph.value(
        "MATCH (:AgentChange {agent: $agent})-[r:PROMOTED_FROM]->() RETURN count(r)",
        agent=new["id"],
    ) == 6
    # each change cites the items its session entry cites
    cited = graph.rows(
        "MATCH (c:AgentChange {agent: $agent})-[:CITES]->(i:Item) "
        "RETURN c.key AS key, collect(i.id) AS items ORDER BY key",
        agent=new["id"],
    )
    assert [(row["key"], sorted(row["items"])) for row in cited] == [
        (key, sorted(session_memory["entries"][key]["sources"]))
        for key in ["airline", "checkin", "seat"]
    ]


def test_the_promote_mutation_reaches_the_provenance_in_one_query(
    api: Api, graph: Graph
) -> None:
    # A12: GraphQL `promote`, provenance one query away
    _, sid = subagent(api)
    session_memory = fill(api, sid)
    body = flat(api.graphql(
        """
        mutation($s: ID!) {
          promote(sessionId: $s, name: "seat helper") {
            agent {
              id name
              memory {
                entries { nodes {
                  key
                  changes { nodes { maker } }
                  sources { session { id } item { id content } }
                } }
              }
            }
            memory { version entries { nodes { key sources { item { id } } } } }
          }
        }
        """,
        s=sid,
    ))
    assert "errors" not in body, body
    promoted = body["data"]["promote"]
    assert promoted["agent"]["name"] == "seat helper"
    assert promoted["memory"]["version"] == 1
    assert sorted(e["key"] for e in promoted["memory"]["entries"]) == [
        "airline", "checkin", "seat"
    ]
    entries = {e["key"]: e for e in promoted["agent"]["memory"]["entries"]}
    assert sorted(entries) == ["airline", "checkin", "seat"]
    for key, entry in entries.items():
        assert entry["changes"] == [{"maker": "PROMOTION"}]
        items = session_memory["entries"][key]["sources"]
        assert [s["item"]["id"] for s in entry["sources"]] == items
        assert all(s["session"] == {"id": sid} for s in entry["sources"])
        assert all(s["item"]["content"] is not None for s in entry["sources"])
    # and the same again through agent(id)
    again = flat(api.graphql(
        "query($a: ID!) { agent(id: $a) { memory { entries { nodes { key "
        "changes { nodes { maker } } sources { session { id } item { id content } } } } } } }",
        a=promoted["agent"]["id"],
    ))
    assert "errors" not in again, again
    assert {e["key"]: e for e in again["data"]["agent"]["memory"]["entries"]} == entries
    assert agents_in_graph(graph) == 2


def test_promoting_a_chat_or_review_session_is_a_conflict_and_creates_nothing(
    api: Api, graph: Graph
) -> None:
    # A12: only a subagent is promoted
    agent = api.agent()["id"]
    chat = api.session(agent)["session"]["id"]
    review = api.session(agent, kind="review")["session"]["id"]
    for sid in (chat, review):
        api.remember(sid, "seat", "Ana prefers window seats.", "preference")
    before = agents_in_graph(graph)
    changes = graph.value("MATCH (c:AgentChange) RETURN count(c)")
    for sid in (chat, review):
        assert_error(api.post(f"/v1/sessions/{sid}/promote", {}), 409, "SessionConflict")
    assert agents_in_graph(graph) == before
    assert graph.value("MATCH (c:AgentChange) RETURN count(c)") == changes
    body = flat(api.graphql(
        'mutation($s: ID!) { promote(sessionId: $s) { agent { id } } }', s=chat
    ))
    assert body.get("data") is None or body["data"].get("promote") is None
    assert body["errors"][0]["extensions"]["code"] == "SESSION_CONFLICT"
    assert agents_in_graph(graph) == before


def test_a_name_out_of_bounds_is_bad_input_over_rest_and_graphql(api: Api, graph: Graph) -> None:
    # A12: the promoted agent's name is 1 to 200 characters on both paths (an empty name is
    # not the default one); nothing is created, and the session is promoted afterwards
    _, sid = subagent(api)
    fill(api, sid)
    before = agents_in_graph(graph)
    for name in ("", "n" * 201):
        assert_error(api.post(f"/v1/sessions/{sid}/promote", {"name": name}), 400,
                     "ValidationError", "name")
        body = flat(api.graphql(
            "mutation($s: ID!, $n: String) { promote(sessionId: $s, name: $n) { agent { id } } }",
            s=sid, n=name,
        ))
        assert body.get("data") is None or body["data"].get("promote") is None, body
        [error] = body["errors"]
        assert (error["extensions"]["code"], error["extensions"]["field"]) == (
            "VALIDATION_ERROR", "name")
    assert agents_in_graph(graph) == before
    assert graph.value("MATCH (c:AgentChange) RETURN count(c)") == 0
    promoted = api.ok(api.post(f"/v1/sessions/{sid}/promote", {"name": "n" * 200}), 201)
    assert promoted["agent"]["name"] == "n" * 200


def test_a_blank_name_or_one_of_several_lines_is_bad_input_for_any_agent(
    api: Api, graph: Graph
) -> None:
    # A12: a name is shown, on one line: only spaces, or a control character, is a 400 on
    # `name`, for a promoted agent (REST and GraphQL) and a new one alike; nothing is created
    _, sid = subagent(api)
    fill(api, sid)
    before = agents_in_graph(graph)
    for name in ("   ", "refund\ndesk", "refund\u0000desk", "\t", "refund\u2028desk"):
        assert_error(api.post(f"/v1/sessions/{sid}/promote", {"name": name}), 400,
                     "ValidationError", "name")
        body = flat(api.graphql(
            "mutation($s: ID!, $n: String) { promote(sessionId: $s, name: $n) { agent { id } } }",
            s=sid, n=name,
        ))
        [error] = body["errors"]
        assert (error["extensions"]["code"], error["extensions"]["field"]) == (
            "VALIDATION_ERROR", "name")
        assert_error(api.post("/v1/agents", {"name": name}), 400, "ValidationError", "name")
    assert agents_in_graph(graph) == before
    promoted = api.ok(api.post(f"/v1/sessions/{sid}/promote", {"name": " refund desk "}), 201)
    assert promoted["agent"]["name"] == " refund desk "


def test_a_promoted_forks_entries_cite_the_session_that_added_their_items(
    api: Api, graph: Graph
) -> None:
    # A3, A12: a fork's history starts as a copy of its source's, so an entry it promotes may
    # rest on items its source added: each is cited in that session, which a deletion of the
    # fork leaves whole, and the agent's memory stays as it was
    _, sid = subagent(api)
    api.remember(sid, "checkin", "Check in online 30 hours before.", "procedure")
    fork = api.ok(api.post(f"/v1/sessions/{sid}/fork", {}), 201)["session"]["id"]
    api.remember(fork, "seat", "Book window seats.", "preference")
    agent = api.ok(api.post(f"/v1/sessions/{fork}/promote", {}), 201)["agent"]["id"]
    memory = api.ok(api.get(f"/v1/agents/{agent}/memory"))
    assert {key: e["sources"] for key, e in memory["entries"].items()} == {
        "checkin": [{"session": sid, "item": "i-01"}],
        "seat": [{"session": fork, "item": "i-02"}],
    }
    assert api.http.delete(f"/v1/sessions/{fork}").status_code == 200
    after = api.ok(api.get(f"/v1/agents/{agent}/memory"))
    assert after["entries"]["checkin"] == memory["entries"]["checkin"]
    assert api.view(sid)["memory"]["entries"]["checkin"]["sources"] == ["i-01"]


def test_a_bad_name_is_bad_input_before_the_session_is_looked_at_on_both_paths(
    api: Api, graph: Graph
) -> None:
    # A12: the name is the request's own input, checked before the session it names, so REST
    # and GraphQL give one answer for a bad name on a chat session or on no session at all
    agent = api.agent()["id"]
    chat = api.session(agent)["session"]["id"]
    api.remember(chat, "seat", "Ana prefers window seats.", "preference")
    before = agents_in_graph(graph)
    for sid in (chat, "ses-none"):
        assert_error(api.post(f"/v1/sessions/{sid}/promote", {"name": ""}), 400,
                     "ValidationError", "name")
        body = flat(api.graphql(
            "mutation($s: ID!, $n: String) { promote(sessionId: $s, name: $n) { agent { id } } }",
            s=sid, n="",
        ))
        assert body.get("data") is None or body["data"].get("promote") is None, body
        [error] = body["errors"]
        assert (error["extensions"]["code"], error["extensions"]["field"]) == (
            "VALIDATION_ERROR", "name")
    assert agents_in_graph(graph) == before


def test_promoting_twice_is_a_conflict(api: Api, graph: Graph) -> None:
    # A12: a session is promoted once
    _, sid = subagent(api)
    fill(api, sid)
    first = api.ok(api.post(f"/v1/sessions/{sid}/promote"), 201)
    count = agents_in_graph(graph)
    assert_error(api.post(f"/v1/sessions/{sid}/promote", {"name": "again"}), 409,
                 "SessionConflict")
    assert agents_in_graph(graph) == count
    assert agent_memory(api, first["agent"]["id"])["version"] == 1


def test_another_members_subagent_session_is_not_found(
    api: Api, member: Api, graph: Graph
) -> None:
    # section 6: a person reaches only their own sessions
    _, sid = subagent(api, api.agent(shared=True)["id"])
    fill(api, sid)
    before = agents_in_graph(graph)
    assert_error(member.post(f"/v1/sessions/{sid}/promote", {}), 404, "NotFound")
    assert agents_in_graph(graph) == before
    assert graph.value("MATCH (c:AgentChange) RETURN count(c)") == 0


def test_a_subagent_with_no_lasting_entries_becomes_an_agent_with_empty_memory(
    api: Api, graph: Graph
) -> None:
    # A12, A1: facts and hypotheses stay behind
    _, sid = subagent(api)
    api.remember(sid, "budget", "The trip budget is 1500 EUR.", "fact")
    api.remember(sid, "delay", "The flight may be delayed.", "hypothesis")
    promoted = api.ok(api.post(f"/v1/sessions/{sid}/promote"), 201)
    assert promoted["memory"]["entries"] == {}
    assert agent_memory(api, promoted["agent"]["id"])["entries"] == {}
    assert graph.value(
        "MATCH (c:AgentChange {agent: $a}) RETURN count(c)", a=promoted["agent"]["id"]
    ) == 0


def test_a_lasting_entry_whose_key_has_an_at_sign_is_a_conflict_until_renamed(
    api: Api, graph: Graph
) -> None:
    # A12, A9: an agent memory key has no @ (a private entry is listed as key@person), on
    # every path that writes agent memory; promotion refuses a session whose lasting entry
    # has one, creates nothing, and promotes it once the entry is remembered under another key
    _, sid = subagent(api)
    api.remember(sid, "contact@acme", "Write to the travel desk first.", "procedure")
    api.remember(sid, "met@desk", "Met the desk on Monday.", "fact")  # not lasting: not carried
    before = agents_in_graph(graph)
    body = assert_error(api.post(f"/v1/sessions/{sid}/promote", {}), 409, "SessionConflict")
    assert "contact@acme" in body["message"]
    assert "met@desk" not in body["message"]
    graphql = flat(api.graphql(
        'mutation($s: ID!) { promote(sessionId: $s) { agent { id } } }', s=sid
    ))
    assert graphql.get("data") is None or graphql["data"].get("promote") is None
    assert graphql["errors"][0]["extensions"]["code"] == "SESSION_CONFLICT"
    assert agents_in_graph(graph) == before
    assert graph.value("MATCH (c:AgentChange) RETURN count(c)") == 0

    api.ok(api.command(sid, {"_tag": "Forget", "key": "contact@acme"}))
    api.remember(sid, "contact-acme", "Write to the travel desk first.", "procedure")
    promoted = api.ok(api.post(f"/v1/sessions/{sid}/promote", {}), 201)
    assert set(promoted["memory"]["entries"]) == {"contact-acme"}


def test_an_entry_only_app_results_support_stays_behind(
    api: Api, openai_stub: OpenAIStub, graph: Graph
) -> None:
    # A4, A12: tool results from Apps are outside data, which no agent memory keeps; a lasting
    # entry of the session that only they support is not promoted, as learning drops it
    helper_is_stub(api, agentMemory=False)
    _, sid = subagent(api)
    openai_stub.script_for(CONSOLIDATE, answer(
        change("fridays", "Keep Fridays free of travel.", ["t-1"], "decision"),
        change("trains", "Book trains, not flights.", ["u-1"], "preference"),
        change("calendar", "Check the calendar before booking.", ["t-1", "u-1"]),
    ))
    api.turn(sid, user("Book trains, not flights; check my calendar first.", id="u-1"),
             tool_result("Calendar: a standing meeting every Friday; keep Fridays free.", "t-1"))
    [run] = api.wait_idle(sid)
    assert run["status"] == "succeeded", run
    session_memory = api.ok(api.get(f"/v1/sessions/{sid}/memory"))["entries"]
    assert sorted(session_memory) == ["calendar", "fridays", "trains"]  # the session keeps all

    memory = api.ok(api.post(f"/v1/sessions/{sid}/promote", {}), 201)["memory"]
    assert sorted(memory["entries"]) == ["calendar", "trains"]
    assert [s["item"] for s in memory["entries"]["trains"]["sources"]] == ["u-1"]
    assert graph.value(
        "MATCH (c:AgentChange {key: 'fridays'}) RETURN count(c)"
    ) == 0
