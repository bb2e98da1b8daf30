"""Agent memory over GraphQL (SPEC A1, A3, A5-A11, sections 5 and 6).

The fields and mutations of notes/agent-memory-contract.md: `agent(id) { memory { version
entries { nodes { ... sources changes } } log(after, limit) } sessions }`, `rememberForAgent`,
`forgetForAgent`, and `AGENT_CONFLICT` for a stale `expected`. Arguments are written into the
documents as literals, so the tests do not depend on how each argument type is spelled.
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest

from tests.api.test_agent_memory import (
    CREDENTIAL,
    agent_changes,
    agent_command,
    agent_log,
    agent_memory,
    agent_remember,
    forget,
    post_agent,
)
from tests.conftest import Api, Graph, RunningServer, flat, user

pytestmark = pytest.mark.usefixtures("graphql_fast_path")

Body = dict[str, Any]

MEMORY = """
query($a: ID!) {
  agent(id: $a) {
    id
    memory {
      version
      entries { nodes {
        key content kind status about visibility updatedAt
        sources { session { id } item { id content turn { id } } }
        changes { nodes { version maker person before content at } }
      } }
      log { nodes { version maker person keys at } }
    }
    sessions { nodes { id } }
  }
}
"""

ANSWER = (
    "version entries { nodes { key content kind status about visibility "
    "sources { session { id } } } }"
)


def literal(value: Any) -> str:
    return json.dumps(value)


ENUM_ARGUMENTS = ("kind", "visibility")  # written as enum literals (Kind, Visibility)


def remember_for_agent(agent: str, expected: int, key: str, content: str,
                       kind: str = "PROCEDURE", **fields: str) -> str:
    args = {"agentId": agent, "expected": expected, "key": key, "content": content,
            "kind": kind, **fields}
    written = ", ".join(
        f"{name}: {value if name in ENUM_ARGUMENTS else literal(value)}"
        for name, value in args.items()
    )
    return f"mutation {{ rememberForAgent({written}) {{ {ANSWER} }} }}"


def forget_for_agent(agent: str, expected: int, key: str) -> str:
    return (f"mutation {{ forgetForAgent(agentId: {literal(agent)}, expected: {expected}, "
            f"key: {literal(key)}) {{ {ANSWER} }} }}")


def data_of(answer: Body) -> Body:
    assert "errors" not in answer, answer
    data: Body = answer["data"]
    return data


def error_of(answer: Body, code: str) -> Body:
    """The one error of a failed mutation, with its extensions.code; data is null."""
    assert answer.get("data") is None, answer
    [error] = answer["errors"]
    assert error["extensions"]["code"] == code, error
    assert "Traceback" not in str(error)
    found: Body = error
    return found


def memory_of(client: Api, agent: str) -> Body:
    memory: Body = data_of(flat(client.graphql(MEMORY, a=agent)))["agent"]["memory"]
    return memory


def by_key(entries: list[Body]) -> dict[str, Body]:
    return {entry["key"]: entry for entry in entries}


# --- Reads ---------------------------------------------------------------------------------


def test_agent_memory_reads_version_entries_changes_and_log(api: Api, member: Api) -> None:
    agent = api.agent("shared planner", shared=True)["id"]
    sid = api.session(agent)["session"]["id"]
    start = int(time.time() * 1000)
    agent_remember(api, agent, "seat", "Ana prefers a window seat.", "preference")
    agent_remember(api, agent, "seat", "Ana prefers an aisle seat.", "preference")
    agent_remember(member, agent, "dates", "Ben books trips in May.", "decision", about="ben")
    end = int(time.time() * 1000)

    data = data_of(flat(api.graphql(MEMORY, a=agent)))["agent"]
    memory = data["memory"]
    assert memory["version"] == 3  # A10
    entries = by_key(memory["entries"])
    assert set(entries) == {"seat", "dates"}
    seat = entries["seat"]
    assert (seat["content"], seat["kind"], seat["status"], seat["about"],
            seat["visibility"]) == ("Ana prefers an aisle seat.", "PREFERENCE", "ACTIVE", None,
                                    "SHARED")
    assert seat["sources"] == []  # A3: a person's Remember cites no item
    assert entries["dates"]["about"] == "ben"  # A5
    # The entry's story: each change with its version, maker, person, before and after.
    story = sorted(seat["changes"], key=lambda c: c["version"])
    assert [(c["version"], c["maker"], c["person"], c["before"], c["content"])
            for c in story] == [
        (1, "PERSON", "ana", None, "Ana prefers a window seat."),
        (2, "PERSON", "ana", "Ana prefers a window seat.", "Ana prefers an aisle seat."),
    ]
    assert all(start <= c["at"] <= end for c in story)
    assert [(c["version"], c["person"]) for c in entries["dates"]["changes"]] == [(3, "ben")]
    # A11: the log, oldest first; the same as REST's.
    assert [(c["version"], c["maker"], c["person"], c["keys"]) for c in memory["log"]] == [
        (1, "PERSON", "ana", ["seat"]),
        (2, "PERSON", "ana", ["seat"]),
        (3, "PERSON", "ben", ["dates"]),
    ]
    assert memory["log"] == [{**c, "maker": c["maker"].upper()} for c in agent_log(api, agent)]
    assert data["sessions"] == [{"id": sid}]
    # The same as the REST view, field by field (REST's words are the enums' values).
    rest = agent_memory(api, agent)["entries"]
    for key, entry in entries.items():
        assert {k: entry[k] for k in ("content", "kind", "status", "about", "visibility",
                                      "updatedAt")} == {
            k: rest[key][k].upper() if k in ("kind", "status", "visibility") else rest[key][k]
            for k in ("content", "kind", "status", "about", "visibility", "updatedAt")}


def test_a_new_agent_has_version_0_and_no_entries(api: Api) -> None:
    agent = api.agent()["id"]
    assert memory_of(api, agent) == {"version": 0, "entries": [], "log": []}  # A10


def test_the_log_pages_with_first_and_after(api: Api) -> None:
    agent = api.agent()["id"]
    for n in range(1, 7):
        agent_remember(api, agent, f"k{n}", f"Habit {n}.")
    query = """
    query($a: ID!, $first: Int!, $after: String) { agent(id: $a) { memory {
      log(first: $first, after: $after) {
        nodes { version keys } pageInfo { hasNextPage endCursor }
      }
    } } }"""

    def page(first: int, after: str | None = None) -> dict[str, Any]:
        answer = api.graphql(query, a=agent, first=first, after=after)
        log: dict[str, Any] = data_of(answer)["agent"]["memory"]["log"]
        return log

    whole = page(50)
    assert [c["version"] for c in whole["nodes"]] == [1, 2, 3, 4, 5, 6]  # A11
    assert whole["pageInfo"]["hasNextPage"] is False
    one = page(2)
    assert [c["version"] for c in one["nodes"]] == [1, 2]
    assert one["pageInfo"]["hasNextPage"] is True
    two = page(3, one["pageInfo"]["endCursor"])
    assert [c["version"] for c in two["nodes"]] == [3, 4, 5]
    three = page(3, two["pageInfo"]["endCursor"])
    assert [c["version"] for c in three["nodes"]] == [6]
    assert three["pageInfo"]["hasNextPage"] is False


# --- Mutations -----------------------------------------------------------------------------


def test_remember_and_forget_for_agent(api: Api, graph: Graph) -> None:
    agent = api.agent()["id"]
    remembered = data_of(flat(api.graphql(remember_for_agent(
        agent, 0, "seat", "Ana prefers a window seat.", "PREFERENCE"))))["rememberForAgent"]
    assert remembered["version"] == 1  # A10
    assert remembered["entries"] == [{
        "key": "seat", "content": "Ana prefers a window seat.", "kind": "PREFERENCE",
        "status": "ACTIVE", "about": None, "visibility": "SHARED", "sources": [],
    }]
    forgotten = data_of(flat(api.graphql(forget_for_agent(agent, 1, "seat"))))["forgetForAgent"]
    assert forgotten["version"] == 2
    [entry] = forgotten["entries"]
    assert (entry["status"], entry["content"]) == ("RETRACTED", "Ana prefers a window seat.")
    back = data_of(flat(api.graphql(remember_for_agent(
        agent, 2, "seat", "Ana prefers an aisle seat.", "PREFERENCE"))))["rememberForAgent"]
    assert back["version"] == 3
    assert [(e["status"], e["content"]) for e in back["entries"]] == [
        ("ACTIVE", "Ana prefers an aisle seat.")]  # A6: a person's Remember brings it back
    assert agent_changes(graph) == 3
    # What the mutations answered is what REST and the query read.
    assert agent_memory(api, agent)["version"] == 3
    assert memory_of(api, agent)["version"] == 3
    assert [c["keys"] for c in agent_log(api, agent)] == [["seat"], ["seat"], ["seat"]]


def test_a_forget_whose_key_is_not_visible_is_refused_over_rest_and_graphql(
    api: Api, graph: Graph
) -> None:
    # S1 (A1): a key is a visible name. A Forget's key is checked by the service, as a
    # Remember's is, so REST and GraphQL refuse it alike, naming the field; nothing changes.
    agent = api.agent()["id"]
    agent_remember(api, agent, "seat", "Ana prefers a window seat.")
    hidden = "se\u200bat"
    rest = agent_command(api, agent, forget(hidden))
    assert rest.status_code == 400, rest.text
    assert (rest.json()["_tag"], rest.json()["field"]) == ("ValidationError", "command.key")
    answer = flat(api.graphql(forget_for_agent(agent, 1, hidden)))
    assert answer.get("data") is None, answer
    [error] = answer["errors"]
    assert (error["extensions"]["code"], error["extensions"]["field"]) == (
        "VALIDATION_ERROR", "key")
    assert agent_memory(api, agent)["version"] == 1
    assert agent_changes(graph) == 1


def test_a_negative_expected_is_bad_input_over_rest_and_graphql(api: Api, graph: Graph) -> None:
    # A10: a version is 0 or more. A negative `expected` is refused as input naming the field
    # on both paths (not an AgentConflict on one of them), and nothing changes.
    agent = api.agent()["id"]
    agent_remember(api, agent, "seat", "Ana prefers a window seat.")
    rest = post_agent(api, agent, -1, forget("seat"))
    assert rest.status_code == 400, rest.text
    assert (rest.json()["_tag"], rest.json()["field"]) == ("ValidationError", "expected")
    for document in (
        remember_for_agent(agent, -1, "tone", "Keep answers friendly."),
        forget_for_agent(agent, -1, "seat"),
    ):
        error = error_of(flat(api.graphql(document)), "VALIDATION_ERROR")
        assert error["extensions"]["field"] == "expected"
    assert agent_memory(api, agent)["version"] == 1
    assert agent_changes(graph) == 1


def test_about_and_visibility_through_the_mutation(api: Api, member: Api) -> None:
    agent = api.agent("shared planner", shared=True)["id"]
    agent_memory(member, agent)
    answer = data_of(flat(api.graphql(remember_for_agent(
        agent, 0, "mine", "Ana's own way.", "PREFERENCE", about="ana",
        visibility="PRIVATE"))))["rememberForAgent"]
    assert [(e["about"], e["visibility"]) for e in answer["entries"]] == [("ana", "PRIVATE")]
    answer = data_of(flat(api.graphql(remember_for_agent(
        agent, 1, "dates", "Ben books trips in May.", "DECISION",
        about="ben"))))["rememberForAgent"]
    assert {e["key"]: (e["about"], e["visibility"]) for e in answer["entries"]} == {
        "mine": ("ana", "PRIVATE"), "dates": ("ben", "SHARED")}  # A5
    assert [e["key"] for e in memory_of(member, agent)["entries"]] == ["dates"]  # A9


def test_a_stale_expected_is_agent_conflict_and_changes_nothing(
    api: Api, graph: Graph
) -> None:
    agent = api.agent()["id"]
    agent_remember(api, agent, "seat", "Ana prefers a window seat.", "preference")
    agent_remember(api, agent, "tone", "Keep answers friendly.")
    before = memory_of(api, agent)
    for expected in (0, 1, 3, 42):
        for document in (
            remember_for_agent(agent, expected, "seat", "Stale write.", "PREFERENCE"),
            remember_for_agent(agent, expected, "new", "A new entry."),
            forget_for_agent(agent, expected, "seat"),
        ):
            error = error_of(flat(api.graphql(document)), "AGENT_CONFLICT")  # A10
            assert error["message"]
    assert memory_of(api, agent) == before
    assert agent_changes(graph) == 2


def test_forget_for_agent_of_an_unknown_key_is_agent_conflict(api: Api, graph: Graph) -> None:
    agent = api.agent()["id"]
    error_of(flat(api.graphql(forget_for_agent(agent, 0, "nope"))), "AGENT_CONFLICT")
    assert memory_of(api, agent)["version"] == 0
    assert agent_changes(graph) == 0


@pytest.mark.parametrize(
    ("content", "kind", "fields", "field"),
    [
        ("A fact.", "FACT", {}, "kind"),  # A1: a Kind, but not one agent memory keeps
        ("Maybe.", "HYPOTHESIS", {}, "kind"),
        (CREDENTIAL, "PROCEDURE", {}, "content"),  # S10
        ("Mine.", "PROCEDURE", {"visibility": "PRIVATE"}, "visibility"),  # A9
        ("Zoe's way.", "PROCEDURE", {"about": "zoe"}, "about"),  # A5
        ("Ben's way.", "PREFERENCE", {"about": "ben", "visibility": "PRIVATE"}, "about"),
    ],
)
def test_a_bad_argument_is_a_validation_error_naming_it_and_writes_nothing(
    api: Api, member: Api, graph: Graph, content: str, kind: str, fields: dict[str, str],
    field: str
) -> None:
    agent = api.agent("shared planner", shared=True)["id"]
    agent_memory(member, agent)  # ben is a person of the org
    answer = flat(api.graphql(remember_for_agent(agent, 0, "k", content, kind, **fields)))
    error = error_of(answer, "VALIDATION_ERROR")
    assert error["extensions"]["field"] == field
    assert CREDENTIAL not in json.dumps(answer)
    assert memory_of(api, agent)["version"] == 0
    assert agent_changes(graph) == 0


@pytest.mark.parametrize(
    ("kind", "fields", "enum"),
    [("opinion", {}, "Kind"), ("preference", {}, "Kind"),
     ("PREFERENCE", {"visibility": "secret"}, "Visibility")],
)
def test_a_name_outside_the_enum_is_graphqls_own_error_and_writes_nothing(
    api: Api, graph: Graph, kind: str, fields: dict[str, str], enum: str
) -> None:
    agent = api.agent()["id"]
    answer = flat(api.graphql(remember_for_agent(agent, 0, "k", "A way.", kind, **fields)))
    assert answer.get("data") is None, answer
    [error] = answer["errors"]
    assert f"'{enum}'" in error["message"], error  # the schema's check, before the service
    assert memory_of(api, agent)["version"] == 0
    assert agent_changes(graph) == 0


# --- A9: the same filtering on every field -------------------------------------------------


def test_every_field_shows_a_member_only_shared_and_their_own_private_entries(
    api: Api, member: Api, platform: Api
) -> None:
    agent = api.agent("shared planner", shared=True)["id"]
    bens = member.session(agent)["session"]["id"]
    agent_remember(api, agent, "tone", "Keep answers friendly.")
    agent_remember(api, agent, "seat", "ANA-SECRET window seat.", "preference", about="ana",
                   visibility="private")
    agent_remember(api, agent, "ana-only", "ANA-SECRET only key.", "preference", about="ana",
                   visibility="private")
    agent_remember(member, agent, "seat", "Ben takes any seat.", "preference", about="ben",
                   visibility="private")
    agent_remember(api, agent, "tone", "Keep answers friendly and short.")
    agent_remember(api, agent, "seat", "ANA-SECRET aisle seat now.", "preference",
                   about="ana", visibility="private")

    query = MEMORY.replace(
        "sessions { nodes { id } }", "sessions { nodes { id instructions { memory agentKeys } } }"
    )
    answer = flat(member.graphql(query, a=agent))
    memory = data_of(answer)["agent"]["memory"]
    text = json.dumps(answer)
    assert "ANA-SECRET" not in text  # A9: not in entries, changes, log or instructions
    assert "ana-only" not in text
    assert memory["version"] == 6  # the one version number of the agent
    assert {(e["key"], e["content"]) for e in memory["entries"]} == {
        ("tone", "Keep answers friendly and short."), ("seat", "Ben takes any seat.")}
    assert [c["version"] for c in memory["log"]] == [1, 4, 5]  # ana's private ones left out
    seat = by_key(memory["entries"])["seat"]
    assert [(c["version"], c["person"], c["before"]) for c in seat["changes"]] == [
        (4, "ben", None)]
    [session] = data_of(answer)["agent"]["sessions"]
    assert session["id"] == bens
    assert set(session["instructions"]["agentKeys"]) == {"tone", "seat@ben"}  # as listed
    assert "Ben takes any seat." in session["instructions"]["memory"]

    # Ana sees her own private ones, not Ben's; the service token sees all of them.
    ana_text = json.dumps(flat(api.graphql(MEMORY, a=agent)))
    assert "Ben takes any seat." not in ana_text
    assert "ANA-SECRET aisle seat now." in ana_text
    everything = memory_of(platform, agent)
    assert {(e["key"], e["about"], e["visibility"]) for e in everything["entries"]} == {
        ("tone", None, "SHARED"), ("seat", "ana", "PRIVATE"), ("ana-only", "ana", "PRIVATE"),
        ("seat", "ben", "PRIVATE")}
    assert [c["version"] for c in everything["log"]] == [1, 2, 3, 4, 5, 6]


def test_a_turn_shows_the_agent_keys_it_was_shown(api: Api) -> None:
    agent = api.agent()["id"]
    sid = api.session(agent)["session"]["id"]
    agent_remember(api, agent, "seat", "Ana prefers a window seat.", "preference")
    turn = api.turn(sid, user("Plan a trip to Porto."))["turn"]["id"]
    query = """query($s: ID!) { session(id: $s) {
        instructions { agentKeys }
        items { nodes { id turn { id shownAgent } } } } }"""
    data = data_of(flat(api.graphql(query, s=sid)))["session"]
    assert data["instructions"]["agentKeys"] == ["seat"]  # A8
    turns = {item["turn"]["id"]: item["turn"]["shownAgent"] for item in data["items"]
             if item["turn"]}
    assert turns == {turn: ["seat"]}  # the turn records the agent keys it was shown
    api.wait_idle(sid)


# --- Section 5: tenancy and tokens ---------------------------------------------------------


def test_another_orgs_agent_is_null_and_its_mutations_are_not_found(
    api: Api, other_org: Api, graph: Graph
) -> None:
    agent = api.agent()["id"]
    agent_remember(api, agent, "seat", "ACME-only window seat.", "preference")
    assert data_of(flat(other_org.graphql(MEMORY, a=agent))) == {"agent": None}
    for document in (remember_for_agent(agent, 1, "seat", "Stolen.", "PREFERENCE"),
                     forget_for_agent(agent, 1, "seat"),
                     remember_for_agent("agt-nope", 0, "seat", "Nowhere.", "PREFERENCE")):
        answer = flat(other_org.graphql(document))
        error_of(answer, "NOT_FOUND")
        assert "ACME-only" not in json.dumps(answer)
    assert memory_of(api, agent)["version"] == 1
    assert agent_changes(graph) == 1


@pytest.mark.parametrize("authorization", [None, "Bearer obm_nope"])
def test_agent_memory_over_graphql_without_a_valid_token_is_401(
    api: Api, graph: Graph, server: RunningServer, authorization: str | None
) -> None:
    agent = api.agent()["id"]
    headers = {} if authorization is None else {"Authorization": authorization}
    with httpx.Client(base_url=server.url, headers=headers, timeout=30) as anonymous:
        for document in (MEMORY, remember_for_agent(agent, 0, "seat", "A seat.", "PREFERENCE")):
            response = anonymous.post("/graphql", json={"query": document,
                                                        "variables": {"a": agent}})
            assert response.status_code == 401, response.text  # section 5
            assert response.json()["_tag"] == "Unauthorized"
    assert agent_changes(graph) == 0
