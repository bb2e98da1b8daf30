"""Consolidation runs at their edges: edits made while the model works, approvals completed
later, switches turned off while a run waits, answers that break the parser, and what a
failed run records."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from app.memory.jobs import runner
from app.memory.jobs.consolidation import Consolidation
from tests.conftest import (
    Api,
    Graph,
    RunningServer,
    claims_nothing,
    first_claim_renews_nothing,
    flat,
    user,
)
from tests.openai_stub import OpenAIStub, Reply, changes

STUB = "openai:test"


def remember(key: str, content: str, sources: list[str]) -> dict[str, Any]:
    return {"op": "remember", "key": key, "content": content, "kind": "fact", "sources": sources}


def test_a_persons_edit_of_the_same_key_while_the_model_works_is_kept(
    api: Api, openai_stub: OpenAIStub
) -> None:
    # S7: changes apply to the newest memory, so an edit made while the model worked is kept,
    # also when the model proposes a change to the very key the person edited.
    sid = api.session(model=STUB)["session"]["id"]
    gate, started = threading.Event(), threading.Event()  # the model works until released
    openai_stub.script(
        Reply(
            gate=gate,
            started=started,
            content=changes(
                remember("budget", "The trip budget is 1500 EUR.", ["m-1"]),
                remember("hotel", "The hotel is near the station.", ["m-1"]),
            ).content,
        )
    )
    api.turn(sid, user("Budget 1500 EUR, hotel near the station.", id="m-1"))
    assert started.wait(30), "the model was not asked"
    api.remember(sid, "budget", "The trip budget is 900 EUR (corrected by Ana).")
    gate.set()
    [run] = api.wait_idle(sid)

    entries = api.ok(api.get(f"/v1/sessions/{sid}/memory"))["entries"]
    assert entries["budget"]["content"] == "The trip budget is 900 EUR (corrected by Ana)."
    assert entries["hotel"]["content"] == "The hotel is near the station."
    assert [(d["key"], d["reason"]) for d in run["dropped"]] == [
        ("budget", "the entry changed while the model worked: the newer edit is kept")
    ]


def test_completing_an_approved_turn_with_no_new_items_consolidates_the_turn(
    api: Api, openai_stub: OpenAIStub
) -> None:
    # S7, S8: a turn that completes after an approval consolidates; S8 looks at the whole turn
    # (its first step had a user message), and the turn's own model runs it.
    sid = api.session()["session"]["id"]  # the session's own model would be the built-in one
    openai_stub.script(changes(remember("budget", "The trip budget is 1500 EUR.", ["m-1"])))
    waiting = api.turn(
        sid, user("Book it, our budget is 1500 EUR.", id="m-1"), status="awaiting_approval",
        model=STUB,
    )["turn"]
    assert api.wait_idle(sid) == []

    done = api.ok(api.post(f"/v1/sessions/{sid}/turns/{waiting['id']}/complete", {}))
    assert done["turn"]["status"] == "completed"
    [run] = api.wait_idle(sid)

    assert run["model"] == STUB
    assert run["read"] == ["m-1"]
    assert len(openai_stub.requests) == 1
    entries = api.ok(api.get(f"/v1/sessions/{sid}/memory"))["entries"]
    assert entries["budget"]["content"] == "The trip budget is 1500 EUR."


def test_a_completing_steps_answer_is_the_turn_as_a_read_of_it_shows_it(api: Api) -> None:
    # SPEC section 5: a turn that awaited approval is the same turn, completed later with the
    # items of its second step; the step answers the whole turn, as a read of it then shows it
    sid = api.session()["session"]["id"]
    waiting = api.turn(
        sid,
        user("Book the 9:15 flight to Lisbon.", id="m-1"),
        {"type": "tool_call", "role": "assistant", "content": "book(LH1234)", "id": "c-1"},
        status="awaiting_approval",
    )["turn"]
    done = api.ok(api.post(f"/v1/sessions/{sid}/turns/{waiting['id']}/complete", {"items": [
        {"type": "approval", "role": "user", "content": "approved", "id": "a-1"},
        {"type": "tool_result", "role": "tool", "content": "booked", "id": "r-1"},
    ]}))
    read = api.ok(api.get(f"/v1/sessions/{sid}/turns/{waiting['id']}"))
    assert done == read
    assert done["turn"]["items"] == ["m-1", "c-1", "a-1", "r-1"]
    assert done["turn"]["status"] == "completed"
    assert done["turn"]["completedAt"] is not None
    assert (done["turn"]["at"], done["turn"]["model"], done["turn"]["shown"]) == (
        waiting["at"], waiting["model"], waiting["shown"])
    api.wait_idle(sid)


def test_a_run_queued_before_generate_was_turned_off_never_asks_the_model(
    api: Api, openai_stub: OpenAIStub
) -> None:
    # S11: with generate off there is no consolidation at all, also for runs already queued.
    sid = api.session(model=STUB)["session"]["id"]
    gate, started = threading.Event(), threading.Event()
    openai_stub.script(Reply(gate=gate, started=started))
    api.turn(sid, user("First.", id="m-1"))
    assert started.wait(30), "the model was not asked"
    api.turn(sid, user("Second.", id="m-2"))  # queued behind the running one
    api.ok(api.command(sid, {"_tag": "Configure", "generate": False}))
    gate.set()
    runs = api.wait_idle(sid)

    assert sorted(run["status"] for run in runs) == ["skipped", "skipped"]
    assert len(openai_stub.requests) == 1
    assert api.ok(api.get(f"/v1/sessions/{sid}/memory"))["processed"] == []


def test_a_run_applies_nothing_when_its_org_turned_generate_off_while_the_model_worked(
    api: Api, openai_stub: OpenAIStub
) -> None:
    # S4, S11: the org's default counts as it stands when the run applies, though turning it
    # off is no change of the session (its revision stays).
    sid = api.session(model=STUB)["session"]["id"]
    gate, started = threading.Event(), threading.Event()
    openai_stub.script(Reply(
        content=json.dumps({"changes": [remember("budget", "The budget is 1500 EUR.", ["m-1"])]}),
        gate=gate, started=started,
    ))
    api.turn(sid, user("Our budget is 1500 EUR.", id="m-1"))
    assert started.wait(30), "the model was not asked"
    revision = api.view(sid)["session"]["revision"]
    api.ok(api.patch("/v1/org/settings", {"memory": {"generate": False}}))
    assert api.view(sid)["session"]["revision"] == revision
    gate.set()
    [run] = api.wait_idle(sid)

    assert run["status"] == "skipped"
    memory = api.ok(api.get(f"/v1/sessions/{sid}/memory"))
    assert (memory["entries"], memory["processed"]) == ({}, [])
    assert api.view(sid)["session"]["revision"] == revision


def test_runs_queued_behind_a_run_that_read_every_item_end_with_it_reading_nothing(
    api: Api, server: RunningServer, openai_stub: OpenAIStub
) -> None:
    # S7: one run per turn is queued; once a run has read every unprocessed item, the
    # runs still queued behind it end with it, succeeded and reading nothing, as each would
    # have on its own; the model is asked once per run that had something to read.
    sid = api.session(model=STUB)["session"]["id"]
    before = jobs_counted(server)
    gate, started = threading.Event(), threading.Event()
    openai_stub.script(
        Reply(content=json.dumps({"changes": [remember("budget", "1500 EUR.", ["m-1"])]}),
              gate=gate, started=started),
        changes(remember("seat", "Ana prefers the aisle.", ["m-2"])),
    )
    api.turn(sid, user("Our budget is 1500 EUR.", id="m-1"))
    assert started.wait(30), "the model was not asked"
    api.turn(sid, user("I like the aisle.", id="m-2"))
    api.turn(sid, user("Thanks.", id="m-3"))  # two runs now wait behind the running one
    gate.set()
    first, second, third = reversed(api.wait_idle(sid))  # oldest first

    assert [r["status"] for r in (first, second, third)] == ["succeeded"] * 3
    assert (first["read"], second["read"], third["read"]) == (["m-1"], ["m-2", "m-3"], [])
    assert (third["attempts"], third["startedAt"]) == (1, third["finishedAt"])
    assert len(openai_stub.requests) == 2
    entries = api.ok(api.get(f"/v1/sessions/{sid}/memory"))["entries"]
    assert sorted(entries) == ["budget", "seat"]
    assert api.ok(api.get(f"/v1/sessions/{sid}/memory"))["processed"] == ["m-1", "m-2", "m-3"]
    # Every run is counted as succeeded; only the two that ran have a duration. A run is
    # counted just after it ends, so the counts are read until they settle.
    deadline = time.monotonic() + 20
    while (counted := jobs_counted(server, before)) != (3, 2) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert counted == (3, 2)


def jobs_counted(
    server: RunningServer, since: tuple[float, float] = (0.0, 0.0)
) -> tuple[float, float]:
    """The server's count of consolidation runs of STUB ended succeeded, and of their
    durations observed (`/metrics`), less `since`."""
    from tests.api.test_metrics import scrape, value

    got = scrape(server.url)
    return (
        value(got, "openbot_memory_jobs_finished_total", kind="consolidation", model=STUB,
              outcome="succeeded") - since[0],
        value(got, "openbot_memory_job_duration_seconds_count", kind="consolidation",
              model=STUB) - since[1],
    )


def test_an_answer_that_breaks_the_parser_fails_the_run_and_records_what_it_tried(
    api: Api, openai_stub: OpenAIStub
) -> None:
    # S11: a malformed answer fails the run with its error; the items stay unprocessed and
    # the run records what it tried to read; the next turn's run reads them all.
    sid = api.session(model=STUB)["session"]["id"]
    openai_stub.script(
        Reply(content="[" * 100_000 + "]" * 100_000),
        changes(remember("budget", "The trip budget is 1500 EUR.", ["m-1"])),
    )
    api.turn(sid, user("Our budget is 1500 EUR.", id="m-1"))
    [failed] = api.wait_idle(sid)
    assert failed["status"] == "failed"
    assert failed["error"] == "ModelError: malformed answer: nested too deeply"
    assert failed["tried"] == ["m-1"]
    assert failed["read"] == []

    api.turn(sid, user("Thanks.", id="m-2"))
    newest = api.wait_idle(sid)[0]
    assert newest["status"] == "succeeded"
    assert newest["read"] == ["m-1", "m-2"]


def completion(message: dict[str, Any] | None, finish_reason: str = "stop") -> Reply:
    """A chat completion whose one choice is `message`, sent as it is written here."""
    choice = {"index": 0, "finish_reason": finish_reason, "message": message}
    return Reply(raw=json.dumps({"id": "chatcmpl-stub", "object": "chat.completion",
                                 "created": 0, "model": "test", "choices": [choice]}))


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (Reply(raw="<html><body>Welcome</body></html>", content_type="text/html"),
         "the server answered no chat completion (is OPENAI_BASE_URL its /v1 address?)"),
        (completion(None), "the model answered no content"),
        (completion({"role": "assistant", "content": [{"type": "text", "text": "{}"}]}),
         "the model answered content that is not text"),
        (completion({"role": "assistant", "content": None, "refusal": "I cannot help."}),
         "the model refused: I cannot help."),
        (completion({"role": "assistant", "content": '{"changes": [{"op": "remem'}, "length"),
         "the answer was cut at the model's output limit"),
    ],
    ids=["html-page", "no-message", "content-parts", "refusal", "cut-at-length"],
)
def test_an_answer_that_is_no_usable_completion_fails_the_run_saying_what_it_was(
    api: Api, openai_stub: OpenAIStub, reply: Reply, error: str
) -> None:
    # S11: what the server answered is told by name on the failed run, which records what it
    # tried; the next turn's run reads the items again
    sid = api.session(model=STUB)["session"]["id"]
    openai_stub.script(reply)
    api.turn(sid, user("Our budget is 1500 EUR.", id="m-1"))
    [failed] = api.wait_idle(sid)
    assert failed["status"] == "failed"
    assert failed["error"] == f"ModelError: {error}"
    assert failed["tried"] == ["m-1"]
    assert failed["read"] == []

    openai_stub.script(changes(remember("budget", "The trip budget is 1500 EUR.", ["m-1"])))
    api.turn(sid, user("Thanks.", id="m-2"))
    assert api.wait_idle(sid)[0]["status"] == "succeeded"
    assert sorted(api.ok(api.get(f"/v1/sessions/{sid}/memory"))["entries"]) == ["budget"]


def test_a_change_with_half_a_character_is_dropped_and_recorded_and_the_others_apply(
    api: Api, openai_stub: OpenAIStub
) -> None:
    # S9: JSON can escape half of a surrogate pair, which no store can encode; the changes
    # holding one are dropped, their record keeps the half as its escape, and the rest apply
    sid = api.session(model=STUB)["session"]["id"]
    openai_stub.script(
        changes(
            remember("budget", "The trip budget is 1500 EUR.", ["m-1"]),
            remember("hotel\ud83d", "The hotel is near the station.", ["m-1"]),
            remember("seat", "An aisle seat \ud83d", ["m-1"]),
        )
    )
    api.turn(sid, user("Budget, hotel and seat.", id="m-1"))
    [run] = api.wait_idle(sid)
    assert run["status"] == "succeeded"
    assert set(api.ok(api.get(f"/v1/sessions/{sid}/memory"))["entries"]) == {"budget"}
    assert [(d["key"], d["reason"]) for d in run["dropped"]] == [
        ("hotel\\ud83d", "bad key: not valid Unicode text (a lone surrogate)"),
        ("seat", "bad content: not valid Unicode text (a lone surrogate)"),
    ]


def test_an_answer_nested_too_deeply_for_the_checks_fails_the_run(
    api: Api, openai_stub: OpenAIStub
) -> None:
    # S11: an answer the parser reads but the checks cannot walk (hundreds of arrays within
    # each other) is malformed; the next turn's run reads the items again
    sid = api.session(model=STUB)["session"]["id"]
    deep = {"op": "remember", "key": "deep", "content": "x", "sources": ["m-1"]}
    nested: Any = "m-1"
    for _ in range(600):
        nested = [nested]
    deep["sources"] = nested
    openai_stub.script(
        Reply(content=json.dumps(
            {"changes": [remember("budget", "The trip budget is 1500 EUR.", ["m-1"]), deep]}
        ))
    )
    api.turn(sid, user("Our budget is 1500 EUR.", id="m-1"))
    [failed] = api.wait_idle(sid)
    assert failed["status"] == "failed"
    assert failed["error"] == "ModelError: malformed answer: nested too deeply"
    assert failed["tried"] == ["m-1"]

    api.turn(sid, user("Thanks.", id="m-2"))
    assert api.wait_idle(sid)[0]["read"] == ["m-1", "m-2"]


def test_a_model_key_no_person_could_forget_is_dropped(api: Api, openai_stub: OpenAIStub) -> None:
    # S9, S14: every key consolidation stores can be forgotten or replaced by a person.
    sid = api.session(model=STUB)["session"]["id"]
    openai_stub.script(
        changes(
            remember("budget\u200b", "The trip budget is 1500 EUR.", ["m-1"]),
            remember("hotel", "The hotel is near the station.", ["m-1"]),
        )
    )
    api.turn(sid, user("Budget and hotel.", id="m-1"))
    [run] = api.wait_idle(sid)
    assert set(api.ok(api.get(f"/v1/sessions/{sid}/memory"))["entries"]) == {"hotel"}
    assert [d["reason"] for d in run["dropped"]] == [
        "bad key: a key has no control or invisible characters"
    ]


def test_consolidated_changes_belong_to_entry_nodes(
    api: Api, openai_stub: OpenAIStub, graph: Graph
) -> None:
    # Section 4: a change made by consolidation is linked to its entry and to the run.
    sid = api.session(model=STUB)["session"]["id"]
    openai_stub.script(changes(remember("budget", "The trip budget is 1500 EUR.", ["m-1"])))
    api.turn(sid, user("Our budget is 1500 EUR.", id="m-1"))
    [run] = api.wait_idle(sid)
    rows = graph.rows(
        """
        MATCH (:Session {id: $sid})-[:HAS_ENTRY]->(e:Entry)<-[:OF_ENTRY]-(c:Change)
              -[:MADE_BY]->(r:Run)
        MATCH (c)-[:CITES]->(i:Item)
        RETURN e.key AS key, c.maker AS maker, r.id AS run, i.id AS item
        """,
        sid=sid,
    )
    assert rows == [{"key": "budget", "maker": "consolidation", "run": run["id"], "item": "m-1"}]


def test_graphql_lone_surrogate_is_a_validation_error(api: Api) -> None:
    # REST and GraphQL refuse text storage cannot keep the same way: the field at fault.
    sid = api.session()["session"]["id"]
    current = api.view(sid)["session"]
    query = """mutation($s: ID!, $e: String!, $r: Int!, $c: String!) {
        remember(sessionId: $s, expected: $e, revision: $r, key: "k", content: $c,
                 kind: FACT) { id } }"""
    variables = {"s": sid, "e": current["head"], "r": current["revision"], "c": "\ud800"}
    # JSON escapes the lone surrogate as \ud800, as a client's JSON encoder would
    raw = json.dumps({"query": query, "variables": variables})
    response = api.http.post(
        "/graphql", content=raw, headers={"content-type": "application/json"}
    )
    assert response.status_code == 200
    [error] = response.json()["errors"]
    assert error["extensions"]["code"] == "VALIDATION_ERROR"
    assert error["extensions"]["field"] == "content"


def test_graphql_turn_items_and_agent_sessions_are_batched(
    api: Api, start_server: Callable[..., RunningServer]
) -> None:
    # A nested read costs a bounded number of statements: agents -> sessions ->
    # items -> turn -> items costs the same for 2 agents as for 6.
    quiet = start_server(worker_poll_seconds=3600.0, workers=1)
    client = Api(quiet.url, api.token)
    query = """{ agents(first: 10) { nodes {
      id sessions { nodes { id items { nodes { id turn { id items { id } } } } } }
    } } }"""
    try:
        cost: list[int] = []
        for added, total in ((2, 2), (4, 6)):
            for _ in range(added):
                agent = client.agent()["id"]
                for _ in range(2):
                    sid = client.session(agent)["session"]["id"]
                    client.turn(sid, user("Hello."), {"type": "message", "role": "assistant",
                                                      "content": "Hi."})
                    client.wait_idle(sid)
                client.wait_learned(agent)  # no learning job may run while counting
            before = quiet.service.db.statements
            answer = flat(client.graphql(query))
            cost.append(quiet.service.db.statements - before)
            assert "errors" not in answer, answer
            found = answer["data"]["agents"]
            assert len(found) == total
            for agent_row in found:
                assert len(agent_row["sessions"]) == 2
                for session in agent_row["sessions"]:
                    assert [i["turn"]["items"] for i in session["items"]] == [
                        [{"id": "i-01"}, {"id": "i-02"}],
                        [{"id": "i-01"}, {"id": "i-02"}],
                    ]
        assert cost[0] == cost[1], cost
    finally:
        client.http.close()


def hold_the_budget_run(
    openai_stub: OpenAIStub, item: str
) -> tuple[threading.Event, threading.Event]:
    """Script the next run to remember the budget from `item`, held until the first event is
    set; the second is set once the run asked its model."""
    gate, started = threading.Event(), threading.Event()
    openai_stub.script_for(
        "memory_changes",
        Reply(content=changes(remember("budget", "The budget is 1500 EUR.", [item])).content,
              gate=gate, started=started),
    )
    return gate, started


def test_wait_answers_once_the_turns_run_has_ended(api: Api, openai_stub: OpenAIStub) -> None:
    # S7 stays off the request path; `?wait=S` lets a script block until the run has ended
    sid = api.session(model=STUB)["session"]["id"]
    gate, started = hold_the_budget_run(openai_stub, "w-1")
    answer = api.ok(api.post(f"/v1/sessions/{sid}/turns", {"items": [user("Budget 1500.", "w-1")]}),
                    201)
    assert "run" not in answer  # no wait: the answer comes at once, as it always did
    assert started.wait(20)
    [queued] = api.ok(api.get(f"/v1/sessions/{sid}/runs"))["runs"]
    run = queued["id"]
    # the run is held: a short wait answers it as it is, still running
    held = api.ok(api.get(f"/v1/sessions/{sid}/runs/{run}", params={"wait": "0.2"}))
    assert held["status"] == "running"
    gate.set()
    ended = api.ok(api.get(f"/v1/sessions/{sid}/runs/{run}", params={"wait": "20"}))
    assert ended["status"] == "succeeded"
    assert ended["read"] == ["w-1"]
    # a turn that waits answers with its run ended, and its memory there
    later = api.ok(api.post(f"/v1/sessions/{sid}/turns?wait=20",
                            {"items": [user("Hello again.", "w-2")]}), 201)
    assert later["run"]["status"] == "succeeded"
    assert api.view(sid)["memory"]["processed"] == ["w-1", "w-2"]


def test_a_wait_is_a_number_in_ascii_digits(api: Api) -> None:
    # Python's float() reads "1_0" as 10, " 2" as 2 and an Arabic-Indic five as 5; the
    # parameter's schema is a number: ASCII digits, a fraction and an exponent
    sid = api.session()["session"]["id"]
    for bad in ("1_0", " 2", "٥", "+1", "0x1", ".5", "5.", "infinity", ""):
        response = api.post(f"/v1/sessions/{sid}/turns", {"items": [user("Hi.")]},
                            params={"wait": bad})
        assert response.status_code == 400, (bad, response.text)
        body = response.json()
        assert (body["_tag"], body["field"], body["message"]) == (
            "ValidationError", "wait", "wait is a number of seconds"), bad
    assert api.ok(api.get(f"/v1/sessions/{sid}"))["session"]["revision"] == 0  # nothing written
    for good in ("0.5", "1e-1", "0"):
        answer = api.post(f"/v1/sessions/{sid}/turns", {"items": [user("Hi.")]},
                          params={"wait": good})
        assert answer.status_code == 201, (good, answer.text)


def test_a_bad_wait_is_400_naming_it(api: Api) -> None:
    sid = api.session()["session"]["id"]
    for bad in ("soon", "-1", "31", "nan"):
        response = api.post(f"/v1/sessions/{sid}/turns?wait={bad}", {"items": [user("Hi.")]})
        assert response.status_code == 400, (bad, response.text)
        assert response.json()["field"] == "wait"
    assert api.ok(api.get(f"/v1/sessions/{sid}"))["session"]["revision"] == 0  # nothing written
    missing = api.get(f"/v1/sessions/{sid}/runs/run-nope")
    assert missing.status_code == 404
    assert missing.json()["_tag"] == "NotFound"


RUN_FIELDS = """query($id: ID!) { session(id: $id) { head
  runs { nodes { id status queuedAt startedAt finishedAt head } } } }"""


def test_graphql_answers_a_runs_start_and_head_as_rest_does(
    api: Api, openai_stub: OpenAIStub
) -> None:
    # S7, S9: a run's start (once a worker began it) and the version it ended at, on both paths
    sid = api.session(model=STUB)["session"]["id"]
    gate, started = hold_the_budget_run(openai_stub, "g-1")
    api.ok(api.post(f"/v1/sessions/{sid}/turns", {"items": [user("Budget 1500.", "g-1")]}), 201)
    assert started.wait(20)

    def both() -> tuple[dict[str, Any], dict[str, Any], str]:
        [rest] = api.ok(api.get(f"/v1/sessions/{sid}/runs"))["runs"]
        session = flat(api.graphql(RUN_FIELDS, id=sid))["data"]["session"]
        [node] = session["runs"]
        return rest, node, session["head"]

    rest, node, _ = both()
    assert (node["status"], node["head"]) == ("RUNNING", None)
    assert node["startedAt"] == rest["startedAt"] is not None
    gate.set()
    ended = api.ok(api.get(f"/v1/sessions/{sid}/runs/{rest['id']}", params={"wait": "20"}))
    assert ended["status"] == "succeeded"
    rest, node, head = both()
    keys = ("id", "queuedAt", "startedAt", "finishedAt", "head")
    assert {k: node[k] for k in keys} == {k: rest[k] for k in keys}
    assert node["head"] == head  # its changes made the session's head


def claimed_twice(
    api: Api, openai_stub: OpenAIStub, **first: Any
) -> tuple[threading.Event, threading.Event, threading.Event, threading.Event]:
    """A run claimed twice (no learning after it): the scripted model answers the first claim
    with `first` (a Reply's status and content), the second by keeping the budget at 1500 EUR,
    each once its gate is set. The first claim's gate and whether it was asked, then the
    second's."""
    api.patch("/v1/org/settings", {"agentMemory": False})
    first_gate, first_asked = threading.Event(), threading.Event()
    second_gate, second_asked = threading.Event(), threading.Event()
    openai_stub.script(
        Reply(gate=first_gate, started=first_asked, **first),
        Reply(gate=second_gate, started=second_asked, content=changes(
            remember("budget", "The trip budget is 1500 EUR.", ["m-1"])).content),
    )
    return first_gate, first_asked, second_gate, second_asked


@contextmanager
def lost_to_another(
    api: Api, server: RunningServer, start_server: Callable[..., RunningServer],
    first_asked: threading.Event, second_asked: threading.Event,
) -> Iterator[tuple[RunningServer, RunningServer, str]]:
    """A session's run claimed by a first process (its lease: 1 s) whose model is asked and
    whose lease runs out (`first_claim_renews_nothing`), then by a second (30 s, however loaded
    the machine) whose model is asked too; inside, only the second may claim. The two
    processes and the session."""
    first = start_server(run_lease_seconds=1)
    second = start_server(run_lease_seconds=30)
    sid = api.session(model=STUB)["session"]["id"]
    with claims_nothing(server):
        with claims_nothing(second):
            api.turn(sid, user("Our budget is 1500 EUR.", id="m-1"))
            assert first_asked.wait(30), "the first worker's model was not asked"
        with claims_nothing(first):
            assert second_asked.wait(60), "no other worker claimed the run"
            yield first, second, sid


def test_a_worker_whose_lease_ran_out_changes_nothing_of_the_run_another_claimed(
    api: Api, server: RunningServer, graph: Graph, openai_stub: OpenAIStub,
    start_server: Callable[..., RunningServer], monkeypatch: pytest.MonkeyPatch,
) -> None:
    # S7, S11: a run is claimed under a lease its worker renews. A worker that cannot renew it
    # loses the run once the lease runs out, and another process claims it again. The first
    # worker's model failing after that changes nothing of the run (the second's claim): it
    # stays running with no error and no item tried, and then ends as the second applies it.
    first_gate, first_asked, second_gate, second_asked = claimed_twice(
        api, openai_stub, status=400, content="refused")
    finish = Consolidation._finish
    ended = threading.Event()

    async def finish_and_tell(self: Consolidation, *args: Any, **kwargs: Any) -> None:
        await finish(self, *args, **kwargs)  # committed
        ended.set()

    first_claim_renews_nothing(monkeypatch)
    monkeypatch.setattr(Consolidation, "_finish", finish_and_tell)
    run = "MATCH (r:Run)-[:FOR_SESSION]->(:Session {id: $s}) "
    with lost_to_another(api, server, start_server, first_asked, second_asked) as (_, _, sid):
        assert graph.value(run + "RETURN r.attempts", s=sid) == 2
        first_gate.set()
        assert ended.wait(30), "the first worker never ended its run"
        assert graph.rows(run + "OPTIONAL MATCH (r)-[t:TRIED]->() "
                          "RETURN r.status AS status, r.error AS error, count(t) AS tried",
                          s=sid) == [{"status": "running", "error": None, "tried": 0}]
        second_gate.set()
        [applied] = api.wait_idle(sid)
    assert (applied["status"], applied["error"], applied["attempts"]) == ("succeeded", None, 2)
    assert api.view(sid)["memory"]["entries"]["budget"]["content"] == (
        "The trip budget is 1500 EUR.")
    assert graph.value("MATCH (:Run)-[t:TRIED]->() RETURN count(t)") == 0


def test_a_worker_whose_lease_ran_out_applies_nothing_of_the_run_another_claimed(
    api: Api, server: RunningServer, graph: Graph, openai_stub: OpenAIStub,
    start_server: Callable[..., RunningServer], monkeypatch: pytest.MonkeyPatch,
) -> None:
    # S7, S9: the first worker's model answers after its lease ran out and another process
    # claimed the run again. What it read is the second claim's to apply: the first applies
    # nothing (no version, no item processed, the run still running), and the memory holds
    # what the second claim's model proposed.
    first_gate, first_asked, second_gate, second_asked = claimed_twice(
        api, openai_stub, content=changes(
            remember("budget", "The trip budget is 1000 EUR.", ["m-1"])).content)
    work = Consolidation.work
    worked = threading.Event()

    async def work_and_tell(self: Consolidation, run_id: str, attempt: int) -> None:
        await work(self, run_id, attempt)  # committed, or nothing written
        if attempt == 1:
            worked.set()

    first_claim_renews_nothing(monkeypatch)
    monkeypatch.setattr(Consolidation, "work", work_and_tell)
    run = "MATCH (r:Run)-[:FOR_SESSION]->(:Session {id: $s}) "
    with lost_to_another(api, server, start_server, first_asked, second_asked) as (_, _, sid):
        revision = api.view(sid)["session"]["revision"]  # both models are still working
        first_gate.set()
        assert worked.wait(30), "the first worker never ended its work"
        assert graph.rows(run + "RETURN r.status AS status, r.attempts AS attempts",
                          s=sid) == [{"status": "running", "attempts": 2}]
        unchanged = api.view(sid)
        assert unchanged["session"]["revision"] == revision
        assert unchanged["memory"]["entries"] == {}
        assert unchanged["memory"]["processed"] == []
        second_gate.set()
        [applied] = api.wait_idle(sid)
    assert (applied["status"], applied["read"], applied["attempts"]) == ("succeeded", ["m-1"], 2)
    assert api.view(sid)["memory"]["entries"]["budget"]["content"] == (
        "The trip budget is 1500 EUR.")


def test_a_worker_whose_claim_was_lost_counts_nothing_of_how_the_run_ended(
    api: Api, server: RunningServer, openai_stub: OpenAIStub,
    start_server: Callable[..., RunningServer], monkeypatch: pytest.MonkeyPatch,
) -> None:
    # S7, section 7 (metrics): the first worker's lease runs out, another process claims the
    # run again and ends it; the first worker's model answers only after that. The run ended
    # once, and is counted once: by the process whose claim ended it, not by both.
    first_gate, first_asked, second_gate, second_asked = claimed_twice(
        api, openai_stub, content=changes(
            remember("budget", "The trip budget is 1000 EUR.", ["m-1"])).content)
    record = runner.record_outcome
    recorded = threading.Event()
    lost_by: list[Any] = []  # the first process's database

    async def record_and_tell(db: Any, *rest: Any) -> None:
        await record(db, *rest)
        if db in lost_by:  # the first worker's claim has ended
            recorded.set()

    first_claim_renews_nothing(monkeypatch)
    monkeypatch.setattr(runner, "record_outcome", record_and_tell)
    with lost_to_another(api, server, start_server, first_asked, second_asked) as (
        first, second, sid
    ):
        lost_by.append(first.service.db)
        second_gate.set()
        [applied] = api.wait_idle(sid)
        assert (applied["status"], applied["attempts"]) == ("succeeded", 2)
        first_gate.set()  # the first worker's model answers after the run ended
        assert recorded.wait(30), "the first worker never ended its claim"
    assert jobs_counted(first) == (0, 0)  # its count, if any, came before `recorded`
    deadline = time.monotonic() + 20  # the second counts the run just after it ends
    while (counted := jobs_counted(second)) != (1, 1) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert counted == (1, 1)
    assert api.view(sid)["memory"]["entries"]["budget"]["content"] == (
        "The trip budget is 1500 EUR.")


def test_a_run_spent_while_two_processes_look_ends_once_and_is_counted_once(
    api: Api, server: RunningServer, graph: Graph,
    start_server: Callable[..., RunningServer], monkeypatch: pytest.MonkeyPatch,
) -> None:
    # S11, section 7 (metrics): a run whose lease ran out three times ends failed. Two
    # processes that look for lapsed leases at once may both find it; the one whose write ends
    # it counts it, and the other counts nothing.
    from tests.api.test_metrics import scrape, value

    fail, look = Consolidation.fail, runner.Workers._requeue_expired
    first_call, release, looked = threading.Event(), threading.Event(), threading.Event()
    returned: list[bool] = []
    held_by: list[Any] = []

    async def fail_slowly_once(self: Consolidation, run_id: str, attempt: int, error: str) -> Any:
        held = not first_call.is_set()
        first_call.set()
        if held:  # the first look to find it waits until the other has ended it
            held_by.append(self.db)
            await asyncio.to_thread(release.wait, 30)
        ended = await fail(self, run_id, attempt, error)
        if held:
            returned.append(bool(ended))
        return ended

    async def look_and_tell(self: runner.Workers) -> None:
        await look(self)  # what it found is ended, and counted or not
        if held_by and self.db is held_by[0] and returned:
            looked.set()

    monkeypatch.setattr(Consolidation, "fail", fail_slowly_once)
    monkeypatch.setattr(runner.Workers, "_requeue_expired", look_and_tell)
    looking = [start_server(run_lease_seconds=1), start_server(run_lease_seconds=1)]
    sid = api.session(model=STUB)["session"]["id"]
    run = "MATCH (r:Run)-[:FOR_SESSION]->(:Session {id: $s}) "
    with claims_nothing(server):
        with claims_nothing(*looking):
            api.turn(sid, user("Our budget is 1500 EUR.", id="m-1"))
            # its third claim's process died: its lease ran out twice before
            graph.rows(run + "SET r.status = 'running', r.attempts = 3, r.lapses = 2, "
                       "r.leaseUntil = 1", s=sid)
        assert first_call.wait(30), "no process found the run spent"
        deadline = time.monotonic() + 30
        while graph.value(run + "RETURN r.status", s=sid) != "failed":
            assert time.monotonic() < deadline, "the other process did not end the run"
            time.sleep(0.05)
        release.set()
        assert looked.wait(30), "the first look never ended"
    [spent] = api.wait_idle(sid)
    assert (spent["status"], spent["attempts"]) == ("failed", 3)
    assert spent["error"] == (
        "the run was stopped 3 times by the end of the process running it, and is not run again")
    assert returned == [False]
    def counted() -> list[float]:
        return [value(scrape(s.url), "openbot_memory_jobs_finished_total",
                      kind="consolidation", model=STUB, outcome="failed") for s in looking]

    deadline = time.monotonic() + 20  # the other process counts it just after it ends it
    while sum(now := counted()) < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sorted(now) == [0, 1]
