"""Provenance as first-class GraphQL fields (entry.story, item.supports, turn.shown) on a
session that was consolidated, edited, reverted and forked; each costs one statement."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import ROOT, Api, Graph, RunningServer, flat, user
from tests.openai_stub import OpenAIStub, changes

pytestmark = pytest.mark.usefixtures("graphql_fast_path")

STUB = "openai:test"

STORY = """query($id: ID!) { session(id: $id) { memory { entries { nodes { key
  story { maker person runModel runTurnId copied before content
          cites { turnId sessionId item { id } } change { op session { id } } } } } } } }"""

SUPPORTS = """query($id: ID!) { session(id: $id) { items(first: 50) { nodes { id
  supports { session { key sessionId op content } agent { key agentId } } } } } }"""

SHOWN = """query($id: ID!) { session(id: $id) { items(first: 50) { nodes { id turn { id shownKeys
  shown { session { key content changeId } agent { key } } } } } } }"""


def remember(key: str, content: str, sources: list[str]) -> dict[str, Any]:
    return {"op": "remember", "key": key, "content": content, "kind": "fact", "sources": sources}


def data(api: Api, query: str, sid: str) -> Any:
    answer = flat(api.graphql(query, id=sid))
    assert "errors" not in answer, answer
    return answer["data"]["session"]


def build(api: Api, openai_stub: OpenAIStub) -> tuple[str, str, str]:
    """Consolidated (p-2 supports `budget`), edited (`seat`), reverted (an edit undone), and
    forked: answers (session, fork, the consolidating turn)."""
    sid = api.session(model=STUB)["session"]["id"]
    openai_stub.script(changes(remember("budget", "The trip budget is 1500 EUR.", ["p-2"])))
    turn = api.turn(sid, user("Hello.", "p-1"), user("Our budget is 1500 EUR.", "p-2"))
    api.wait_idle(sid)
    api.remember(sid, "seat", "Ana prefers window seats.")
    before_notes = api.view(sid)["session"]
    api.remember(sid, "notes", "A note to undo.")
    head = api.view(sid)["session"]
    api.ok(api.post(f"/v1/sessions/{sid}/revert", {"expected": head["head"],
                                                   "revision": head["revision"],
                                                   "to": before_notes["head"]}))
    fork = api.ok(api.post(f"/v1/sessions/{sid}/fork", {}), 201)["session"]["id"]
    return sid, fork, turn["turn"]["id"]


def test_an_entrys_story_runs_through_the_fork_to_the_run_and_turn_that_made_it(
    api: Api, openai_stub: OpenAIStub
) -> None:
    sid, fork, turn = build(api, openai_stub)
    entries = {e["key"]: e for e in data(api, STORY, fork)["memory"]["entries"]}
    assert set(entries) == {"budget", "seat"}  # the reverted note is not there
    copy, made = entries["budget"]["story"]
    assert copy["maker"] == "FORK"
    assert copy["copied"] is True
    assert copy["change"]["session"] == {"id": fork}
    assert made["maker"] == "CONSOLIDATION"
    assert made["runModel"] == STUB
    assert made["runTurnId"] == turn
    assert made["before"] is None
    assert made["content"] == "The trip budget is 1500 EUR."
    assert made["cites"] == [{"turnId": turn, "sessionId": sid, "item": {"id": "p-2"}}]
    assert made["change"]["session"] == {"id": sid}
    seat = entries["seat"]["story"][-1]
    assert seat["maker"] == "PERSON"
    assert seat["person"] == "ana"
    assert seat["cites"][0]["turnId"] is None  # a memory edit comes in no turn


STEPS = """query($id: ID!) { session(id: $id) { memory { entries { nodes { key
  story { change { id madeBy cites { id } } }
  changes(first: 50) { nodes { id madeBy cites { id } } } } } } } }"""


def test_a_story_steps_change_is_the_change_its_entrys_changes_answer(
    api: Api, platform: Api, openai_stub: OpenAIStub
) -> None:
    # S3, SPEC section 4: each step's change is the change `changes` answers: what made it (a
    # person, a run, the service, a fork) and the items it cites
    _, fork, _ = build(api, openai_stub)
    platform.remember(fork, "hotel", "The hotel is near the station.")
    entries = {e["key"]: e for e in data(api, STEPS, fork)["memory"]["entries"]}
    assert set(entries) == {"budget", "seat", "hotel"}
    for key, entry in entries.items():
        assert [step["change"] for step in entry["story"]] == entry["changes"], key
    made = entries["budget"]["story"][-1]["change"]
    assert made["cites"] == [{"id": "p-2"}]
    assert made["madeBy"] is not None
    assert entries["hotel"]["story"][0]["change"]["madeBy"] == "platform"
    assert entries["budget"]["story"][0]["change"]["madeBy"] == "ana"  # she forked
    # a fork's copies are made by who forked: here the org's service token
    again = platform.ok(platform.post(f"/v1/sessions/{fork}/fork", {}), 201)["session"]["id"]
    copies = data(api, STEPS, again)["memory"]["entries"]
    assert {e["key"]: e["story"][0]["change"]["madeBy"] for e in copies} == {
        "budget": "platform", "seat": "platform", "hotel": "platform"}


def test_the_guides_browser_query_tells_the_story_graphql_tells(
    api: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # S3: the Neo4j Browser query of the provenance guide walks the story GraphQL answers
    _, fork, _ = build(api, openai_stub)
    guide = (ROOT / "docs/guides/provenance.md").read_text()
    block = guide.split("```cypher\n", 1)[1].split("```", 1)[0]
    story_query = block.split(";", 1)[0]
    assert "'budget'" in story_query
    rows = graph.rows(story_query, session=fork)
    steps = [(row["c.op"], row["c.content"]) for row in rows]
    story = {e["key"]: e for e in data(api, STORY, fork)["memory"]["entries"]}["budget"]["story"]
    assert steps == [
        (step["change"]["op"].lower(), step["content"]) for step in story]


def test_an_item_supports_its_facts_in_the_session_and_its_fork(
    api: Api, openai_stub: OpenAIStub
) -> None:
    sid, fork, _ = build(api, openai_stub)
    items = {i["id"]: i["supports"] for i in data(api, SUPPORTS, sid)["items"]}
    assert items["p-1"] == {"session": [], "agent": []}
    supported = {(s["sessionId"], s["key"], s["op"]) for s in items["p-2"]["session"]}
    assert supported == {(sid, "budget", "REMEMBER"), (fork, "budget", "COPY")}


def test_a_turn_shows_the_entries_it_was_given(api: Api, openai_stub: OpenAIStub) -> None:
    sid, _, _ = build(api, openai_stub)
    api.turn(sid, user("What is my budget?", "p-9"))
    api.wait_idle(sid)
    items = {i["id"]: i for i in data(api, SHOWN, sid)["items"]}
    later = items["p-9"]["turn"]
    assert sorted(later["shownKeys"]) == ["budget", "seat"]
    shown = {e["key"]: e["content"] for e in later["shown"]["session"]}
    assert shown == {"budget": "The trip budget is 1500 EUR.",
                     "seat": "Ana prefers window seats."}
    assert items["p-1"]["turn"]["shown"] == {"session": [], "agent": []}  # memory was empty


def test_each_provenance_field_costs_one_statement_whatever_the_size(
    api: Api, start_server: Callable[..., RunningServer]
) -> None:
    quiet = start_server(worker_poll_seconds=3600.0, workers=1)
    client = Api(quiet.url, api.token)
    sizes = {2: client.session()["session"]["id"], 8: client.session()["session"]["id"]}
    for size, sid in sizes.items():
        for n in range(size):
            client.remember(sid, f"key-{n}", f"Fact {n}.")
            client.remember(sid, f"key-{n}", f"Fact {n}, again.")
    for query in (STORY, SUPPORTS, SHOWN):
        cost = {}
        for size, sid in sizes.items():
            before = quiet.service.db.statements
            answer = flat(client.graphql(query, id=sid))
            cost[size] = quiet.service.db.statements - before
            assert "errors" not in answer, answer
        assert cost[2] == cost[8], (query, cost)
        assert cost[2] <= 5, (query, cost)
    client.http.close()
