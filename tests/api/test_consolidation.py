"""Turns that teach, through HTTP, rule by rule (SPEC S5-S11, S16, section 5).

The model is a scripted OpenAI-compatible server on localhost, reached through the real
`openai` SDK: nothing is patched. A session uses it when its model is `openai:<name>`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from app.memory.turns.instructions import FRAMING
from tests.conftest import Api, Graph, RunningServer, assistant, claims_nothing, user
from tests.openai_stub import OpenAIStub, Reply, changes

STUB = "openai:test"

Body = dict[str, Any]


def remember(key: str, content: str, sources: list[str], kind: str | None = "fact") -> Body:
    return {"op": "remember", "key": key, "content": content, "kind": kind, "sources": sources}


def stub_session(api: Api, **fields: Any) -> str:
    session_id: str = api.session(model=STUB, **fields)["session"]["id"]
    return session_id


def memory(api: Api, session_id: str) -> Body:
    body: Body = api.ok(api.get(f"/v1/sessions/{session_id}/memory"))
    return body


def runs(api: Api, session_id: str) -> list[Body]:
    found: list[Body] = api.ok(api.get(f"/v1/sessions/{session_id}/runs"))["runs"]
    return found


def instructions(api: Api, session_id: str) -> Body:
    body: Body = api.ok(api.get(f"/v1/sessions/{session_id}/instructions"))
    return body


def contents(view: Body) -> dict[str, tuple[str, str]]:
    """Each entry's content and status, by key."""
    return {key: (e["content"], e["status"]) for key, e in view["entries"].items()}


def forget_command(api: Api, session_id: str, key: str) -> None:
    api.ok(api.command(session_id, {"_tag": "Forget", "key": key}))


def refresh(api: Api, session_id: str) -> Any:
    return api.command(session_id, {"_tag": "Refresh"})


def stored_anywhere(graph: Graph, text: str) -> int:
    """How many nodes or relationships hold `text` in any property (strings and lists)."""
    holds = (
        "any(k IN keys(x) WHERE (x[k] IS :: STRING AND x[k] CONTAINS $text) "
        "OR (x[k] IS :: LIST<STRING NOT NULL> AND any(s IN x[k] WHERE s CONTAINS $text)))"
    )
    nodes = graph.value(f"MATCH (x) WHERE {holds} RETURN count(x)", text=text)
    edges = graph.value(f"MATCH ()-[x]->() WHERE {holds} RETURN count(x)", text=text)
    return int(nodes) + int(edges)


# S5: what a turn is shown


def test_active_entries_go_into_the_instructions_and_are_recorded_on_the_turn(
    api: Api, graph: Graph
) -> None:
    # S5: active entries are sent in a text that says memory is past evidence; retracted never
    sid = stub_session(api)
    api.remember(sid, "budget", "The trip budget is 1500 EUR.")
    api.remember(sid, "hotel", "The hotel is near the station.")
    api.remember(sid, "seat", "Ana prefers window seats.", "preference")
    forget_command(api, sid, "hotel")

    shown = instructions(api, sid)
    assert sorted(shown["included"]["session"]) == ["budget", "seat"]
    assert "The trip budget is 1500 EUR." in shown["memory"]
    assert "Ana prefers window seats." in shown["memory"]
    assert "hotel" not in shown["memory"]
    assert "near the station" not in shown["memory"]
    assert "past evidence" in shown["memory"]
    assert "current instructions" in shown["memory"]

    turn = api.turn(sid, user("Find me a flight.", id="m-1"))["turn"]
    assert sorted(turn["shown"]) == ["budget", "seat"]
    assert (
        api.ok(api.get(f"/v1/sessions/{sid}/turns/{turn['id']}"))["turn"]["shown"]
        == (turn["shown"])
    )
    # which turn saw which fact, in the graph
    saw = graph.rows(
        "MATCH (:Turn {id: $turn})-[:SAW]->(c:Change) RETURN c.key AS key, c.status AS status",
        turn=turn["id"],
    )
    assert sorted((row["key"], row["status"]) for row in saw) == [
        ("budget", "active"),
        ("seat", "active"),
    ]
    api.wait_idle(sid)


def test_newest_entries_come_first_in_the_instructions(api: Api) -> None:
    # S6: newest first by updatedAt
    sid = stub_session(api)
    api.remember(sid, "first", "Oldest fact.")
    api.remember(sid, "second", "Middle fact.")
    api.remember(sid, "third", "Newest fact.")
    entries = memory(api, sid)["entries"]
    order = sorted(entries, key=lambda key: (-entries[key]["updatedAt"], key))
    shown = instructions(api, sid)
    assert shown["included"]["session"] == order
    text = shown["memory"]
    positions = [text.index(entries[key]["content"]) for key in order]
    assert positions == sorted(positions)


def test_with_use_off_nothing_is_sent(api: Api) -> None:
    # S5: only when `use` is on
    sid = stub_session(api)
    api.remember(sid, "budget", "The trip budget is 1500 EUR.")
    api.ok(api.command(sid, {"_tag": "Configure", "use": False}))

    assert instructions(api, sid) == {"memory": "", "included": {"session": [], "agent": []}}
    turn = api.turn(sid, user("Find me a flight."))["turn"]
    assert turn["shown"] == []
    api.wait_idle(sid)


def test_with_use_off_for_the_org_nothing_is_sent(api: Api) -> None:
    # S4, S5: the org default applies when the session sets nothing
    sid = stub_session(api)
    api.remember(sid, "budget", "The trip budget is 1500 EUR.")
    api.ok(api.patch("/v1/org/settings", {"memory": {"use": False}}))
    assert instructions(api, sid)["memory"] == ""
    api.ok(api.command(sid, {"_tag": "Configure", "use": True}))
    assert instructions(api, sid)["included"]["session"] == ["budget"]


# S6: the budget


def test_a_smaller_limit_stops_before_the_first_entry_that_does_not_fit(
    api: Api, start_server: Callable[..., RunningServer]
) -> None:
    # S6: a server policy changes the limit; no later, smaller entry is taken; none is cut
    limit = len(FRAMING) + 200
    small = start_server(max_length=limit)
    sid = stub_session(api)
    api.remember(sid, "small-old", "Oldest, short.")
    api.remember(sid, "big", "A long fact. " + "x" * 300)
    api.remember(sid, "small-new", "Newest, short.")

    client = Api(small.url, api.token)
    try:
        shown = instructions(client, sid)
    finally:
        client.http.close()
    assert len(shown["memory"]) <= limit
    assert shown["included"]["session"] == ["small-new"]
    assert "Newest, short." in shown["memory"]
    assert "A long fact." not in shown["memory"]
    assert "x" * 10 not in shown["memory"]
    assert "Oldest, short." not in shown["memory"]

    # the default server (8000 characters) takes all three
    assert instructions(api, sid)["included"]["session"] == ["small-new", "big", "small-old"]


def test_the_text_never_exceeds_the_limit_and_turns_see_what_fits(
    api: Api, start_server: Callable[..., RunningServer]
) -> None:
    # S6
    limit = len(FRAMING) + 150
    small = start_server(max_length=limit)
    sid = stub_session(api)
    for n in range(8):
        api.remember(sid, f"fact-{n}", f"Fact number {n} about the trip to Lisbon.")
    client = Api(small.url, api.token)
    try:
        shown = instructions(client, sid)
        turn = client.ok(
            client.post(f"/v1/sessions/{sid}/turns", {"items": [user("Plan day one.")]}), 201
        )["turn"]
        client.wait_idle(sid)
    finally:
        client.http.close()
    assert len(shown["memory"]) <= limit
    assert 0 < len(shown["included"]["session"]) < 8
    # newest first: the last remembered facts
    assert shown["included"]["session"] == [
        f"fact-{n}" for n in range(7, 7 - len(shown["included"]["session"]), -1)
    ]
    assert turn["shown"] == shown["included"]["session"]


# S7: consolidation off the request path


def test_a_completed_turn_answers_at_once_and_consolidation_runs_after(
    api: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # S7: completing a turn does not wait for the model
    sid = stub_session(api)
    gate = threading.Event()  # the model thinks until the test has looked
    openai_stub.script(
        Reply(
            gate=gate,
            content=json.dumps(
                {"changes": [remember("budget", "The trip budget is 1500 EUR.", ["m-1"])]}
            ),
        )
    )
    response = api.post(
        f"/v1/sessions/{sid}/turns",
        {"items": [user("Our budget is 1500 EUR.", id="m-1"), assistant("Noted.")]},
    )
    assert response.status_code == 201, response.text
    turn = response.json()["turn"]
    assert turn["status"] == "completed"
    assert turn["items"][0] == "m-1"
    assert len(turn["items"]) == 2
    # the model is still thinking: the turn is recorded, memory is not yet changed
    assert memory(api, sid)["entries"] == {}
    [pending] = runs(api, sid)
    assert pending["status"] in ("queued", "running")
    assert pending["turn"] == turn["id"]

    gate.set()
    [run] = api.wait_idle(sid)
    assert run["status"] == "succeeded"
    assert run["error"] is None
    assert run["model"] == STUB
    assert run["read"] == turn["items"]
    after = memory(api, sid)
    assert after["entries"]["budget"]["content"] == "The trip budget is 1500 EUR."
    assert after["entries"]["budget"]["sources"] == ["m-1"]
    assert set(turn["items"]) <= set(after["processed"])

    # provenance: the change was made by the run, with its model, and cites the item
    [change] = graph.rows(
        "MATCH (c:Change {key: 'budget'})-[:MADE_BY]->(r:Run {id: $run}) "
        "MATCH (c)-[:CITES]->(i:Item) "
        "RETURN c.maker AS maker, c.model AS model, collect(i.id) AS cites",
        run=run["id"],
    )
    assert change == {"maker": "consolidation", "model": STUB, "cites": ["m-1"]}


def test_the_model_is_asked_for_memory_changes_with_a_json_schema(
    api: Api, openai_stub: OpenAIStub
) -> None:
    # S7, section 5: chat completions with response_format json_schema named memory_changes,
    # given the current memory and the unprocessed items with their ids
    sid = stub_session(api)
    api.remember(sid, "budget", "The trip budget is 1500 EUR.")
    api.turn(sid, user("I prefer window seats.", id="m-1"))
    api.wait_idle(sid)

    [request] = openai_stub.requests
    assert request["model"] == "test"
    assert request["response_format"]["type"] == "json_schema"
    assert request["response_format"]["json_schema"]["name"] == "memory_changes"
    schema = request["response_format"]["json_schema"]["schema"]
    assert "changes" in schema["properties"]
    prompt = "\n".join(message["content"] for message in request["messages"])
    assert "The trip budget is 1500 EUR." in prompt
    assert "m-1" in prompt
    assert "I prefer window seats." in prompt


def test_an_edit_made_while_the_model_is_slow_is_kept(api: Api, openai_stub: OpenAIStub) -> None:
    # S7: changes apply to the newest memory, so an edit made while the model worked is kept
    sid = stub_session(api)
    gate, started = threading.Event(), threading.Event()
    openai_stub.script(
        Reply(
            gate=gate,
            started=started,
            content=json.dumps(
                {"changes": [remember("budget", "The trip budget is 1500 EUR.", ["m-1"])]}
            ),
        )
    )
    api.turn(sid, user("Our budget is 1500 EUR.", id="m-1"))
    assert started.wait(30), "the model was not asked"
    edited = api.remember(sid, "seat", "Ana prefers window seats.", "preference")
    assert "budget" not in edited["memory"]["entries"]  # the model has not answered yet

    gate.set()
    [run] = api.wait_idle(sid)
    assert run["status"] == "succeeded"
    assert contents(memory(api, sid)) == {
        "budget": ("The trip budget is 1500 EUR.", "active"),
        "seat": ("Ana prefers window seats.", "active"),
    }
    # the newest head is the consolidation's, made after the person's edit
    view = api.view(sid)
    assert view["session"]["revision"] > edited["session"]["revision"]
    assert view["session"]["head"] != edited["session"]["head"]


def test_an_edit_of_another_key_while_the_model_is_slow_survives_a_forget(
    api: Api, openai_stub: OpenAIStub
) -> None:
    # S7: the model's answer is applied to the memory as it is when the answer comes
    sid = stub_session(api)
    api.remember(sid, "hotel", "The hotel is near the station.")
    gate, started = threading.Event(), threading.Event()
    openai_stub.script(
        Reply(
            gate=gate,
            started=started,
            content=json.dumps({"changes": [{"op": "forget", "key": "hotel", "sources": ["m-1"]}]}),
        )
    )
    api.turn(sid, user("We cancelled the hotel.", id="m-1"))
    assert started.wait(30), "the model was not asked"
    api.remember(sid, "budget", "The trip budget is 900 EUR.")
    gate.set()
    api.wait_idle(sid)
    assert contents(memory(api, sid)) == {
        "hotel": ("The hotel is near the station.", "retracted"),
        "budget": ("The trip budget is 900 EUR.", "active"),
    }


def test_a_turn_awaiting_approval_consolidates_only_when_it_completes(
    api: Api, openai_stub: OpenAIStub
) -> None:
    # S7: also a turn that completes after an approval
    sid = stub_session(api)
    first = api.turn(
        sid,
        user("Book the 9:15 flight to Lisbon.", id="m-1"),
        {"type": "tool_call", "role": "assistant", "content": "book(LH1234)", "id": "c-1"},
        status="awaiting_approval",
    )["turn"]
    assert first["status"] == "awaiting_approval"
    assert first["completedAt"] is None
    assert runs(api, sid) == []  # nothing queued
    assert openai_stub.requests == []

    openai_stub.script(
        changes(remember("flight", "Ana is booked on LH1234 at 9:15.", ["m-1", "r-1"], "decision"))
    )
    response = api.post(
        f"/v1/sessions/{sid}/turns/{first['id']}/complete",
        {
            "items": [
                {"type": "approval", "role": "user", "content": "approved", "id": "a-1"},
                {"type": "tool_result", "role": "tool", "content": "booked", "id": "r-1"},
            ]
        },
    )
    assert response.status_code == 200, response.text
    completed = response.json()["turn"]
    assert completed["id"] == first["id"]
    assert completed["status"] == "completed"
    assert completed["completedAt"] is not None

    [run] = api.wait_idle(sid)
    assert run["status"] == "succeeded"
    assert run["turn"] == first["id"]
    assert run["read"] == ["m-1", "c-1", "a-1", "r-1"]
    entry = memory(api, sid)["entries"]["flight"]
    assert entry["content"] == "Ana is booked on LH1234 at 9:15."
    assert entry["sources"] == ["m-1", "r-1"]
    assert len(openai_stub.requests) == 1


def test_completing_a_turn_that_is_not_awaiting_approval_is_a_conflict(api: Api) -> None:
    # S7: a turn completes once
    sid = stub_session(api)
    turn = api.turn(sid, user("Hello."))["turn"]
    response = api.post(f"/v1/sessions/{sid}/turns/{turn['id']}/complete", {"items": []})
    assert response.status_code == 409, response.text
    assert response.json()["_tag"] == "SessionConflict"
    missing = api.post(f"/v1/sessions/{sid}/turns/trn-nope/complete", {"items": []})
    assert missing.status_code == 404
    assert missing.json()["_tag"] == "NotFound"
    api.wait_idle(sid)


# S8


def test_a_turn_that_only_runs_an_app_action_never_calls_the_model(
    api: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # S8: no model ran in it, so it changes no memory
    sid = stub_session(api)
    openai_stub.script(changes(remember("calendar", "Ana opened the calendar.", ["x-1"])))
    turn = api.turn(
        sid,
        {
            "type": "app_action",
            "role": "assistant",
            "content": "open calendar",
            "app": "calendar",
            "id": "x-1",
        },
    )["turn"]
    assert turn["status"] == "completed"
    assert runs(api, sid) == []
    assert graph.value("MATCH (r:Run) RETURN count(r)") == 0
    assert memory(api, sid)["entries"] == {}
    assert memory(api, sid)["processed"] == []
    assert openai_stub.requests == []


def test_an_app_action_completed_after_an_approval_never_calls_the_model(
    api: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # S7, S8: a person approving an App action runs no model either, so the turn it completes
    # changes no memory and teaches the agent nothing
    sid = stub_session(api)
    openai_stub.script(changes(remember("seat", "Ana booked seat 12A.", ["x-2"])))
    waiting = api.turn(sid, {"type": "app_action", "role": "assistant", "content": "book 12A",
                             "app": "air", "id": "x-1"}, status="awaiting_approval")["turn"]
    done = api.ok(api.post(f"/v1/sessions/{sid}/turns/{waiting['id']}/complete", {"items": [
        {"type": "approval", "role": "user", "content": "approved", "id": "x-2"},
        {"type": "tool_result", "role": "tool", "content": "booked 12A", "app": "air",
         "id": "x-3"}]}))
    assert done["turn"]["status"] == "completed"
    assert runs(api, sid) == []
    assert graph.value("MATCH (r:Run) RETURN count(r)") == 0
    assert memory(api, sid)["entries"] == {}
    agent = api.view(sid)["session"]["agent"]
    assert api.ok(api.get(f"/v1/agents/{agent}/learning")) == {"jobs": []}
    assert openai_stub.requests == []


# S9


def test_each_kind_of_bad_change_is_dropped_and_recorded_while_good_ones_apply(
    api: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # S9, S10: a change that breaks a rule is dropped and recorded; the rest apply
    sid = stub_session(api)
    api.remember(sid, "hotel", "The hotel is near the station.")
    forget_command(api, sid, "hotel")
    api.turn(sid, user("Hello!", id="m-1"))  # read by a first run: processed
    [first] = api.wait_idle(sid)
    assert first["status"] == "succeeded"
    assert first["read"] == ["m-1"]

    secret = "Xk9!mP2qLz"
    openai_stub.script(
        changes(
            remember("budget", "The trip budget is 1500 EUR.", ["m-2"]),
            remember("no-source", "Ana travels in May.", []),
            remember("processed", "Ana said hello.", ["m-1"]),
            remember("unknown-item", "Ana likes trains.", ["m-99"]),
            remember("budget", "The trip budget is 2000 EUR.", ["m-2"]),
            remember("hotel", "The hotel is near the beach.", ["m-3"]),
            remember("wifi", f"The hotel wifi password is {secret}", ["m-3"]),
            remember("bad-kind", "Ana is tired.", ["m-3"], kind="mood"),
            {"op": "remember", "key": "malformed", "content": "x", "sources": "m-3"},
            remember("seat", "Ana prefers window seats.", ["m-3"], "preference"),
        )
    )
    api.turn(
        sid,
        user("Our budget is 1500 EUR.", id="m-2"),
        user("I prefer window seats.", id="m-3"),
    )
    second = api.wait_idle(sid)[0]
    assert second["status"] == "succeeded"
    assert second["read"] == ["m-2", "m-3"]

    assert contents(memory(api, sid)) == {
        "budget": ("The trip budget is 1500 EUR.", "active"),
        "seat": ("Ana prefers window seats.", "active"),
        "hotel": ("The hotel is near the station.", "retracted"),
    }
    reasons = {(d["key"], d["reason"]) for d in second["dropped"]}
    assert len(second["dropped"]) == 8
    expected = {
        "no-source": "cites no source",
        "processed": "cites an item already processed",
        "unknown-item": "not among the unprocessed items",
        "budget": "a second change for the same key",
        "hotel": "revives a retracted entry",
        "wifi": "holds a credential",
        "bad-kind": "unknown kind",
        "malformed": "malformed change",
    }
    for key, reason in expected.items():
        assert any(k == key and reason in r for k, r in reasons), (key, reasons)
    assert len(second["kept"]) == 2
    # the good changes are recorded as made by this run, the dropped ones with it
    assert (
        graph.value(
            "MATCH (:Run {id: $run})-[:DROPPED]->(d:DroppedChange) RETURN count(d)",
            run=second["id"],
        )
        == 8
    )
    assert sorted(
        graph.rows(
            "MATCH (c:Change)-[:MADE_BY]->(:Run {id: $run}) RETURN c.key AS key", run=second["id"]
        ),
        key=lambda row: str(row["key"]),
    ) == [{"key": "budget"}, {"key": "seat"}]


def test_a_run_reads_only_unprocessed_items(api: Api, openai_stub: OpenAIStub) -> None:
    # S9: it reads only unprocessed items; person's memory edits are not read as items
    sid = stub_session(api)
    api.turn(sid, user("Hello.", id="m-1"), assistant("Hi!"))
    [first] = api.wait_idle(sid)
    api.remember(sid, "budget", "The trip budget is 1500 EUR.")
    api.turn(sid, user("Our budget is 2000 EUR.", id="m-3"))
    second, again = api.wait_idle(sid)
    assert again["id"] == first["id"]
    assert second["read"] == ["m-3"]
    second_prompt = openai_stub.requests[1]["messages"][-1]["content"]
    assert "m-3" in second_prompt
    assert '"m-1"' not in second_prompt


# S10


def test_the_model_is_told_what_not_to_keep(api: Api, openai_stub: OpenAIStub) -> None:
    # S10: reuse a key for the same fact, only clear user statements as preferences, never
    # passwords, keys or links that give access
    sid = stub_session(api)
    api.turn(sid, user("Hello."))
    api.wait_idle(sid)
    [request] = openai_stub.requests
    system = " ".join(m["content"] for m in request["messages"] if m["role"] == "system").lower()
    assert "reuse" in system
    assert "key" in system
    assert "preference" in system
    assert "clear statements by the user" in system
    assert "password" in system
    assert "api key" in system
    assert "links" in system


def test_a_credential_from_the_model_is_never_stored(
    api: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # S10: dropped and recorded why; the secret is stored nowhere, not even in the record
    sid = stub_session(api)
    secret = "ghp_" + "Q7w8E9r0T1" * 4
    openai_stub.script(
        changes(
            remember("github", f"Ana's GitHub token is {secret}", ["m-1"]),
            remember("repo", "The project lives in the acme/widgets repository.", ["m-1"]),
        )
    )
    api.turn(sid, user("Please look at acme/widgets.", id="m-1"))
    [run] = api.wait_idle(sid)
    assert run["status"] == "succeeded"
    assert list(memory(api, sid)["entries"]) == ["repo"]
    [dropped] = run["dropped"]
    assert dropped["key"] == "github"
    assert "credential" in dropped["reason"]
    assert secret not in json.dumps(runs(api, sid))
    assert stored_anywhere(graph, secret) == 0
    assert stored_anywhere(graph, "acme/widgets") > 0  # the search does find what is stored


def test_a_direct_remember_of_a_credential_is_refused(api: Api) -> None:
    # S10: 400 ValidationError on content
    sid = stub_session(api)
    response = api.command(
        sid,
        {
            "_tag": "Remember",
            "key": "db",
            "content": "Connect with postgres://admin:S3cretPw@db.example.com/app",
            "kind": "fact",
        },
    )
    assert response.status_code == 400, response.text
    assert response.json()["_tag"] == "ValidationError"
    assert response.json()["field"] == "command.content"
    assert memory(api, sid)["entries"] == {}


# S11


def test_a_failing_model_leaves_items_unprocessed_and_the_next_turn_reads_them(
    api: Api, openai_stub: OpenAIStub
) -> None:
    # S11: an error, then a malformed answer, then a valid one
    sid = stub_session(api)
    openai_stub.script(
        Reply(status=500),
        Reply(content="not json"),
        changes(
            remember("budget", "The trip budget is 1500 EUR.", ["m-1"]),
            remember("seat", "Ana prefers window seats.", ["m-3"], "preference"),
        ),
    )
    one = api.turn(sid, user("Our budget is 1500 EUR.", id="m-1"))["turn"]
    assert one["status"] == "completed"
    [failed_one] = api.wait_idle(sid)
    assert failed_one["status"] == "failed"
    assert failed_one["error"]
    assert failed_one["read"] == []
    assert memory(api, sid)["processed"] == []

    two = api.turn(sid, user("We fly on Monday.", id="m-2"))["turn"]
    assert two["status"] == "completed"
    failed_two = api.wait_idle(sid)[0]
    assert failed_two["status"] == "failed"
    assert "malformed" in failed_two["error"]
    assert failed_two["read"] == []
    assert memory(api, sid)["processed"] == []
    assert memory(api, sid)["entries"] == {}

    api.turn(sid, user("I prefer window seats.", id="m-3"))
    all_runs = api.wait_idle(sid)
    assert [run["status"] for run in all_runs] == ["succeeded", "failed", "failed"]
    assert all_runs[0]["read"] == ["m-1", "m-2", "m-3"]
    after = memory(api, sid)
    assert after["processed"] == ["m-1", "m-2", "m-3"]
    assert contents(after) == {
        "budget": ("The trip budget is 1500 EUR.", "active"),
        "seat": ("Ana prefers window seats.", "active"),
    }
    # the third request showed the model all three turns' items
    assert len(openai_stub.requests) == 3
    third_prompt = openai_stub.requests[2]["messages"][-1]["content"]
    for item_id in ("m-1", "m-2", "m-3"):
        assert item_id in third_prompt


def test_a_model_that_times_out_fails_the_run_and_the_turn_still_completes(
    api: Api, openai_stub: OpenAIStub, server: RunningServer,
    start_server: Callable[..., RunningServer],
) -> None:
    # S11: a timeout is a failure like any other. The model answers only once the run is
    # over, later than this server's 0.5 s; the shared test server, whose model waits on its
    # test, claims no run meanwhile.
    impatient = start_server(model_timeout_seconds=0.5, model_retries=0)
    sid = stub_session(api)
    gate = threading.Event()
    openai_stub.script(
        Reply(gate=gate, content=json.dumps({"changes": [remember("x", "Late.", ["m-1"])]}))
    )
    client = Api(impatient.url, api.token)
    try:
        with claims_nothing(server):
            response = client.post(
                f"/v1/sessions/{sid}/turns", {"items": [user("Hi.", id="m-1")]})
            assert response.status_code == 201, response.text
            assert response.json()["turn"]["status"] == "completed"
            [run] = client.wait_idle(sid)
    finally:
        gate.set()
        client.http.close()
    assert run["status"] == "failed"
    assert "timed out" in run["error"].lower() or "did not answer" in run["error"]
    assert run["read"] == []
    assert memory(api, sid)["processed"] == []
    assert memory(api, sid)["entries"] == {}


def test_a_run_whose_process_stops_goes_back_to_the_queue_at_once(
    api: Api, openai_stub: OpenAIStub, server: RunningServer,
    start_server: Callable[..., RunningServer],
) -> None:
    # A process that stops while its run waits on the model ends the run's lease (an hour
    # here) as it stops: the next process runs it again at once, not once the lease ran out.
    stopping = start_server(run_lease_seconds=3600)
    sid = stub_session(api)
    gate, started = threading.Event(), threading.Event()
    openai_stub.script(
        Reply(gate=gate, started=started, content=changes(remember("x", "Lost.", ["m-1"])).content),
        changes(remember("budget", "The trip budget is 1500 EUR.", ["m-1"])),
    )
    client = Api(stopping.url, api.token)
    try:
        with claims_nothing(server):
            turn = client.post(f"/v1/sessions/{sid}/turns",
                               {"items": [user("Our budget is 1500 EUR.", id="m-1")]})
            assert turn.status_code == 201, turn.text
            assert started.wait(30), "the model was not asked"
            stopping.stop()
    finally:
        gate.set()
        client.http.close()
    [run] = api.wait_idle(sid)  # the shared server claims it again
    assert (run["status"], run["attempts"]) == ("succeeded", 2)
    assert set(memory(api, sid)["entries"]) == {"budget"}


def test_with_generate_off_the_model_is_never_called(api: Api, openai_stub: OpenAIStub) -> None:
    # S11: with `generate` off there is no consolidation at all (S16: Refresh does nothing)
    sid = stub_session(api)
    api.ok(api.command(sid, {"_tag": "Configure", "generate": False}))
    openai_stub.script(changes(remember("budget", "The trip budget is 1500 EUR.", ["m-1"])))
    turn = api.turn(sid, user("Our budget is 1500 EUR.", id="m-1"))["turn"]
    assert turn["status"] == "completed"
    answer = refresh(api, sid)
    assert answer.status_code == 200, answer.text
    assert answer.json()["memory"]["entries"] == {}
    assert runs(api, sid) == []
    assert openai_stub.requests == []
    assert memory(api, sid)["processed"] == []


def test_with_generate_off_for_the_org_the_model_is_never_called(
    api: Api, openai_stub: OpenAIStub
) -> None:
    # S4, S11
    api.ok(api.patch("/v1/org/settings", {"memory": {"generate": False}}))
    sid = stub_session(api)
    api.turn(sid, user("Our budget is 1500 EUR.", id="m-1"))
    assert runs(api, sid) == []
    assert openai_stub.requests == []


# S16


def test_refresh_runs_consolidation_now(api: Api, openai_stub: OpenAIStub) -> None:
    # S16: with the session's model; it waits for the run and answers the session
    sid = stub_session(api)
    api.ok(api.command(sid, {"_tag": "Configure", "generate": False}))
    api.turn(sid, user("Our budget is 1500 EUR.", id="m-1"))
    api.ok(api.command(sid, {"_tag": "Configure", "generate": None}))
    assert runs(api, sid) == []

    openai_stub.script(changes(remember("budget", "The trip budget is 1500 EUR.", ["m-1"])))
    # expected and revision are not compared, only required
    answer = api.post(
        f"/v1/sessions/{sid}/memory",
        {"expected": "v-stale", "revision": 0, "command": {"_tag": "Refresh"}},
    )
    assert answer.status_code == 200, answer.text
    view = answer.json()
    assert view["memory"]["entries"]["budget"]["content"] == "The trip budget is 1500 EUR."
    assert view["memory"]["processed"] == ["m-1"]
    [run] = runs(api, sid)
    assert run["trigger"] == "refresh"
    assert run["status"] == "succeeded"
    assert run["model"] == STUB
    assert run["turn"] is None


def test_refresh_needs_expected_and_revision(api: Api) -> None:
    # S16: both must be sent
    sid = stub_session(api)
    for body in (
        {"command": {"_tag": "Refresh"}},
        {"expected": "v-1", "command": {"_tag": "Refresh"}},
        {"revision": 0, "command": {"_tag": "Refresh"}},
    ):
        response = api.post(f"/v1/sessions/{sid}/memory", body)
        assert response.status_code == 400, response.text
        assert response.json()["_tag"] == "ValidationError"
    assert runs(api, sid) == []


def test_refresh_with_no_model_is_a_conflict(api: Api) -> None:
    # S16: no model on the session, its agent or the org: 409
    api.ok(api.patch("/v1/org/settings", {"model": None}))
    sid: str = api.session()["session"]["id"]
    response = refresh(api, sid)
    assert response.status_code == 409, response.text
    assert response.json()["_tag"] == "SessionConflict"
    # and a turn with no model queues nothing
    api.turn(sid, user("Our budget is 1500 EUR."))
    assert runs(api, sid) == []


# Turns: ids chosen by the client, safe retries


def test_item_ids_chosen_by_the_client_are_kept_and_cited(
    api: Api, openai_stub: OpenAIStub
) -> None:
    # section 5: a client may choose item ids, unique in the session
    sid = stub_session(api)
    openai_stub.script(changes(remember("budget", "The trip budget is 1500 EUR.", ["msg-7"])))
    turn = api.turn(
        sid, user("Our budget is 1500 EUR.", id="msg-7"), assistant("Noted."), user("Thanks.")
    )["turn"]
    assert turn["items"][0] == "msg-7"
    assert len(set(turn["items"])) == 3
    api.wait_idle(sid)
    assert memory(api, sid)["entries"]["budget"]["sources"] == ["msg-7"]

    # another turn that reuses an id is not a retry: refused, and nothing of it is recorded
    taken = api.post(f"/v1/sessions/{sid}/turns", {"items": [user("Again?", id="msg-7")]})
    assert taken.status_code == 409, taken.text
    assert taken.json()["_tag"] == "SessionConflict"
    changed = api.post(
        f"/v1/sessions/{sid}/turns",
        {"items": [user("Our budget is 900 EUR.", id="msg-7"), assistant("Noted."), user("X")]},
    )
    assert changed.status_code == 409, changed.text
    assert len(runs(api, sid)) == 1


def test_sending_the_same_turn_again_is_safe(
    api: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # section 5: same answer, nothing doubled
    sid = stub_session(api)
    openai_stub.script(changes(remember("budget", "The trip budget is 1500 EUR.", ["m-1"])))
    body = {"items": [user("Our budget is 1500 EUR.", id="m-1"), {**assistant("Ok."), "id": "m-2"}]}
    first = api.post(f"/v1/sessions/{sid}/turns", body)
    assert first.status_code == 201, first.text
    again = api.post(f"/v1/sessions/{sid}/turns", body)
    assert again.status_code == 200, again.text
    assert again.json() == first.json()
    api.wait_idle(sid)
    late = api.post(f"/v1/sessions/{sid}/turns", body)
    assert late.status_code == 200, late.text
    assert late.json() == first.json()

    assert graph.value("MATCH (t:Turn) RETURN count(t)") == 1
    assert graph.value("MATCH (i:Item) RETURN count(i)") == 2
    assert graph.value("MATCH (r:Run) RETURN count(r)") == 1
    assert graph.value("MATCH (c:Change) RETURN count(c)") == 1
    assert len(openai_stub.requests) == 1
    assert memory(api, sid)["processed"] == ["m-1", "m-2"]


def test_completing_the_same_turn_again_is_safe(api: Api, graph: Graph) -> None:
    # S7, section 5: a retried completion answers the same and queues nothing more
    sid = stub_session(api)
    first = api.turn(sid, user("Book it.", id="m-1"), status="awaiting_approval")["turn"]
    body = {"items": [{"type": "approval", "role": "user", "content": "yes", "id": "a-1"}]}
    path = f"/v1/sessions/{sid}/turns/{first['id']}/complete"
    done = api.post(path, body)
    assert done.status_code == 200, done.text
    again = api.post(path, body)
    assert again.status_code == 200, again.text
    assert again.json() == done.json()
    api.wait_idle(sid)
    assert graph.value("MATCH (i:Item) RETURN count(i)") == 2
    assert graph.value("MATCH (r:Run) RETURN count(r)") == 1


def test_a_completion_sending_the_ids_of_a_recorded_step_is_a_conflict(
    api: Api, graph: Graph
) -> None:
    # S7, section 5: only a completion's own items sent again answer it again; the items of
    # the turn's first step, or of another turn, are ids already used: 409, and the turn
    # still awaits its approval
    sid = stub_session(api)
    other = api.turn(sid, user("Hello.", id="m-0"))["turn"]
    waiting = api.turn(sid, user("Book it.", id="m-1"), status="awaiting_approval")["turn"]
    path = f"/v1/sessions/{sid}/turns/{waiting['id']}/complete"
    for reused, ids in ((user("Book it.", id="m-1"), "m-1"), (user("Hello.", id="m-0"), "m-0")):
        answer = api.post(path, {"items": [reused]})
        assert answer.status_code == 409, answer.text
        assert answer.json()["_tag"] == "SessionConflict"
        assert answer.json()["message"] == f"item ids already used in this session: {ids}"
    turn = api.ok(api.get(f"/v1/sessions/{sid}/turns/{waiting['id']}"))["turn"]
    assert turn["status"] == "awaiting_approval"
    assert api.ok(api.get(f"/v1/sessions/{sid}/turns/{other['id']}"))["turn"] == other
    api.wait_idle(sid)


# The built-in model


def test_the_builtin_model_keys_each_fact_by_its_own_words_in_any_script(api: Api) -> None:
    # S1: one key holds one fact; facts that differ only in words outside ASCII are two
    sid: str = api.session()["session"]["id"]
    api.turn(sid, user("Remember that Олег is on leave."))
    api.turn(sid, user("Remember that Анна is on leave."))
    api.turn(sid, user("I prefer 北京烤鸭."), user("I prefer ラーメン."))
    api.wait_idle(sid)
    entries = memory(api, sid)["entries"]
    assert {key: e["content"] for key, e in entries.items()} == {
        "олег-on-leave": "Олег is on leave.",
        "анна-on-leave": "Анна is on leave.",
        "prefers-北京烤鸭": "The user prefers 北京烤鸭.",
        "prefers-ラーメン": "The user prefers ラーメン.",
    }


def test_the_builtin_model_learns_clear_statements(api: Api, openai_stub: OpenAIStub) -> None:
    # section 5: with no configuration at all (the org's default model is built in)
    sid: str = api.session()["session"]["id"]
    api.turn(sid, user("Hi, my name is Ana."), assistant("Hello Ana!"))
    api.turn(sid, user("Our budget is 1500 EUR."))
    api.turn(sid, user("I prefer window seats."))
    all_runs = api.wait_idle(sid)
    assert [run["status"] for run in all_runs] == ["succeeded"] * len(all_runs)
    assert all(run["model"] == "builtin" for run in all_runs)
    entries = memory(api, sid)["entries"]
    learned = {(e["kind"], e["content"]) for e in entries.values()}
    assert ("fact", "The user's name is Ana.") in learned
    assert any(kind == "fact" and "1500 EUR" in content for kind, content in learned)
    assert any(kind == "preference" and "window seats" in content for kind, content in learned)
    assert all(e["sources"] and e["status"] == "active" for e in entries.values())
    assert openai_stub.requests == []

    # the next turn is shown what was learned
    shown = instructions(api, sid)
    assert "Ana" in shown["memory"]
    assert "1500 EUR" in shown["memory"]
    assert "window seats" in shown["memory"]
