"""Agent learning through HTTP, rule by rule (SPEC A2-A6, A9, S8, S10, S11).

The helper model is the scripted OpenAI-compatible server (`openai:stub`, set as the org's
`helperModel`), reached through the real `openai` SDK. Learning requests carry the response
format `agent_memory_changes`, consolidation's `memory_changes`, so a test scripts and counts
each apart. Windows are made by gated replies the test releases, never by sleeps. The shapes
are those of notes/learning-contract.md.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import pytest

from app.memory.jobs.learning import Learning
from tests.api.test_agent_memory import (
    agent_command,
    agent_forget,
    agent_log,
    agent_memory,
    agent_remember,
    instructions,
)
from tests.api.test_consolidation import stored_anywhere
from tests.conftest import (
    Api,
    Graph,
    RunningServer,
    assistant,
    claims_nothing,
    first_claim_renews_nothing,
    flat,
    user,
)
from tests.openai_stub import OpenAIStub, Reply

Body = dict[str, Any]

STUB = "openai:stub"
LEARN = "agent_memory_changes"
CONSOLIDATE = "memory_changes"
FINISHED = ("succeeded", "failed", "skipped")


# --- helpers ----------------------------------------------------------------------------


def helper_is_stub(client: Api, consolidation: bool = True, **settings: Any) -> Body:
    """The org learns with the stub; its sessions consolidate with it too, or not at all."""
    body: Body = client.ok(
        client.patch(
            "/v1/org/settings",
            {"helperModel": STUB, "model": STUB if consolidation else None, **settings},
        )
    )
    return body


def change(
    key: str,
    content: str,
    sources: list[str],
    kind: str = "procedure",
    about: str | None = None,
    visibility: str | None = None,
    op: str = "remember",
) -> Body:
    return {"op": op, "key": key, "content": content, "kind": kind, "sources": sources,
            "about": about, "visibility": visibility}


def answer(*proposed: Body, gate: threading.Event | None = None,
           started: threading.Event | None = None) -> Reply:
    return Reply(content=json.dumps({"changes": list(proposed)}), gate=gate, started=started)


def learning_jobs(client: Api, agent: str) -> list[Body]:
    jobs: list[Body] = client.ok(client.get(f"/v1/agents/{agent}/learning"))["jobs"]
    return jobs


def wait_learned(
    client: Api, agent: str, sessions: Iterable[str] = (), jobs: int = 1, timeout: float = 30
) -> list[Body]:
    """Wait until the sessions' consolidation runs are over, the agent has at least `jobs`
    learning jobs, and every one of them is finished; its jobs, newest first."""
    deadline = time.monotonic() + timeout
    for session in sessions:
        client.wait_idle(session, timeout=timeout)
    while True:
        found = learning_jobs(client, agent)
        if len(found) >= jobs and all(job["status"] in FINISHED for job in found):
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"learning jobs not finished: {found}")
        time.sleep(0.05)


def wait_event(event: threading.Event, what: str, timeout: float = 20) -> None:
    if not event.wait(timeout):
        raise AssertionError(f"timed out waiting until {what}")


def new_items(request: Body) -> list[Body]:
    """The NEW ITEMS a learning request gave the helper model."""
    text = request["messages"][-1]["content"]
    items: list[Body] = json.loads(text.split("NEW ITEMS:", 1)[1])
    return items


def prompt(request: Body) -> str:
    return "\n".join(str(message["content"]) for message in request["messages"])


def session_id(client: Api, agent: str, **fields: Any) -> str:
    sid: str = client.session(agent, **fields)["session"]["id"]
    return sid


def learned_counts(graph: Graph) -> dict[str, int]:
    rows = graph.rows("MATCH (:LearningJob)-[:LEARNED]->(i:Item) RETURN i.id AS id, count(*) AS n")
    return {row["id"]: row["n"] for row in rows}


def tool_result(content: str, id: str, app: str | None = "calendar") -> Body:
    item: Body = {"type": "tool_result", "role": "tool", "content": content, "id": id}
    if app is not None:
        item["app"] = app
    return item


# --- A2: when the agent learns ---------------------------------------------------------


def test_a_turn_teaches_the_agent_once_with_sources_log_and_job(
    api: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # A2: a completed turn, then an empty queue: one helper call; A3: sources; A11: the log
    helper_is_stub(api)
    agent = api.agent()["id"]
    sid = session_id(api, agent)
    openai_stub.script_for(
        LEARN,
        answer(change("confirm-dates", "Confirm the travel dates before booking.", ["u-1"])),
    )
    turn = api.turn(
        sid,
        user("Always confirm the dates with me before you book anything.", id="u-1"),
        {**assistant("I will confirm the dates first."), "id": "a-1"},
    )["turn"]
    [job] = wait_learned(api, agent, [sid])

    [request] = openai_stub.requests_for(LEARN)
    assert len(openai_stub.requests_for(CONSOLIDATE)) == 1  # the session consolidated too
    assert request["response_format"]["type"] == "json_schema"
    assert 'PERSON: "ana"' in prompt(request)
    assert [(i["id"], i["author"]) for i in new_items(request)] == [("u-1", "ana"),
                                                                     ("a-1", "assistant")]
    # the instruction: lasting experience only, reuse keys, private, no credentials
    system = request["messages"][0]["content"].lower()
    assert "lasting" in system
    assert "reuse the existing key" in system
    assert "private" in system
    assert "api keys" in system
    assert "AGENT MEMORY" in prompt(request)

    view = agent_memory(api, agent)
    assert view["version"] == 1
    entry = view["entries"]["confirm-dates"]
    assert entry["content"] == "Confirm the travel dates before booking."
    assert entry["kind"] == "procedure"
    assert entry["status"] == "active"
    assert entry["sources"] == [{"session": sid, "item": "u-1"}]  # A3
    assert entry["visibility"] == "shared"
    assert entry["about"] is None

    [logged] = agent_log(api, agent)  # A11
    assert logged["version"] == 1
    assert logged["maker"] == "consolidation"
    assert logged["person"] is None
    assert logged["keys"] == ["confirm-dates"]

    assert job["status"] == "succeeded"
    assert job["model"] == STUB
    assert job["error"] is None
    assert job["attempts"] == 1
    assert job["agent"] == agent
    assert job["read"] == ["u-1", "a-1"]
    assert job["tried"] == []
    assert job["dropped"] == []
    assert job["sessions"] == [sid]
    [kept] = job["kept"]
    assert graph.value(
        "MATCH (c:AgentChange {id: $id})-[:MADE_BY]->(:LearningJob {id: $job}) RETURN c.key",
        id=kept, job=job["id"],
    ) == "confirm-dates"
    # the change cites the turn's item in that session
    assert graph.rows(
        "MATCH (c:AgentChange {id: $id})-[:CITES]->(i:Item)-[:IN_TURN]->(t:Turn) "
        "RETURN i.id AS item, t.id AS turn",
        id=kept,
    ) == [{"item": "u-1", "turn": turn["id"]}]


def test_learning_waits_while_another_session_of_the_agent_consolidates(
    api: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # A2: the agent's queue is empty only when no consolidation of any of its sessions is
    # queued or running
    helper_is_stub(api)
    agent = api.agent()["id"]
    first = session_id(api, agent)
    second = session_id(api, agent)
    gate, started = threading.Event(), threading.Event()
    openai_stub.script_for(CONSOLIDATE, Reply(gate=gate, started=started))
    openai_stub.script_for(
        LEARN,
        answer(change("book-trains", "Book trains where possible.", ["u-1"])),
        answer(change("no-red-eye", "Never book night flights.", ["u-1"])),
    )
    try:
        api.turn(first, user("Book trains where you can.", id="u-1"))
        wait_event(started, "the first session's consolidation runs")
        api.turn(second, user("Never book night flights for me.", id="u-1"))
        [run] = api.wait_idle(second)  # the second session's own run is over
        assert run["status"] == "succeeded"
        # the first session's run is still held: nothing is learned yet
        assert [r["status"] for r in api.ok(api.get(f"/v1/sessions/{first}/runs"))["runs"]] == [
            "running"
        ]
        assert openai_stub.requests_for(LEARN) == []
        assert all(job["status"] == "queued" for job in learning_jobs(api, agent))
        assert graph.value(
            "MATCH (j:LearningJob) WHERE j.status IN ['running', 'succeeded', 'failed'] "
            "RETURN count(j)"
        ) == 0
        assert agent_memory(api, agent)["version"] == 0
    finally:
        gate.set()

    jobs = wait_learned(api, agent, [first, second])
    # exactly the learning: one job, one call per session with new items
    [job] = jobs
    assert job["status"] == "succeeded"
    requests = openai_stub.requests_for(LEARN)
    assert len(requests) == 2
    asked = sorted([item["content"] for item in new_items(r)] for r in requests)
    assert asked == [["Book trains where you can."], ["Never book night flights for me."]]
    assert sorted(job["sessions"]) == sorted([first, second])
    view = agent_memory(api, agent)
    assert view["version"] == 2  # one version per session learned
    assert sorted(
        (e["sources"][0]["session"], e["sources"][0]["item"]) for e in view["entries"].values()
    ) == sorted([(first, "u-1"), (second, "u-1")])
    assert learned_counts(graph) == {"u-1": 2}  # each session's u-1, once each


def test_a_burst_of_turns_becomes_a_few_calls(
    api: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # A2: one call per session with new items, not one per turn
    helper_is_stub(api)
    agent = api.agent()["id"]
    sid = session_id(api, agent)
    gate, started = threading.Event(), threading.Event()
    openai_stub.script_for(CONSOLIDATE, Reply(gate=gate, started=started))
    burst = [f"b-{n}" for n in range(1, 6)]
    try:
        api.turn(sid, user("Always book aisle seats.", id=burst[0]))
        wait_event(started, "the first consolidation runs")
        for n, item in enumerate(burst[1:], start=2):
            api.turn(sid, user(f"Note number {n} about the trip.", id=item))
        assert openai_stub.requests_for(LEARN) == []
    finally:
        gate.set()

    jobs = wait_learned(api, agent, [sid])
    assert all(job["status"] == "succeeded" for job in jobs)
    requests = openai_stub.requests_for(LEARN)
    assert 1 <= len(requests) < len(burst)
    # every turn's items are read exactly once across the jobs
    assert learned_counts(graph) == {item: 1 for item in burst}
    read = [item for job in jobs for item in job["read"]]
    assert sorted(read) == sorted(burst)
    asked = [item["id"] for request in requests for item in new_items(request)]
    assert sorted(asked) == sorted(burst)


def _control_learns(api: Api, agent: str, openai_stub: OpenAIStub, quiet: str) -> None:
    """A teaching turn of a chat session of the same agent afterwards: it is learned from, and
    the helper is asked about its items only, never `quiet`'s."""
    control = session_id(api, agent)
    api.turn(control, user("Always book refundable fares.", id="c-1"))
    jobs = wait_learned(api, agent, [control])
    [request] = openai_stub.requests_for(LEARN)
    assert [item["id"] for item in new_items(request)] == ["c-1"]
    assert all(quiet not in job["sessions"] for job in jobs)
    assert [item for job in jobs for item in job["read"]] == ["c-1"]


def test_a_review_session_never_calls_the_helper(api: Api, openai_stub: OpenAIStub) -> None:
    # A2: never from a `review` session
    helper_is_stub(api)
    agent = api.agent()["id"]
    sid = session_id(api, agent, kind="review")
    api.turn(sid, user("Always book aisle seats.", id="u-1"))
    [run] = api.wait_idle(sid)  # its consolidation ran (session memory still learns)
    assert run["status"] == "succeeded"
    assert openai_stub.requests_for(LEARN) == []
    assert learning_jobs(api, agent) == []
    _control_learns(api, agent, openai_stub, sid)


def test_a_generate_off_session_never_calls_the_helper(
    api: Api, openai_stub: OpenAIStub
) -> None:
    # A2: never from a session whose `generate` is off when the turn completes
    helper_is_stub(api)
    agent = api.agent()["id"]
    sid = session_id(api, agent)
    api.ok(api.command(sid, {"_tag": "Configure", "generate": False}))
    api.turn(sid, user("Always book aisle seats.", id="u-1"))
    assert api.wait_idle(sid) == []  # S12: no consolidation either
    assert openai_stub.requests_for(LEARN) == []
    assert learning_jobs(api, agent) == []
    _control_learns(api, agent, openai_stub, sid)
    assert openai_stub.requests_for(CONSOLIDATE) != []  # the stub was in use all along


def test_with_agent_memory_off_for_the_org_the_helper_is_never_called(
    api: Api, openai_stub: OpenAIStub
) -> None:
    # A2: never when the org's `agentMemory` is false
    helper_is_stub(api, agentMemory=False)
    agent = api.agent()["id"]
    sid = session_id(api, agent)
    api.turn(sid, user("Always book aisle seats.", id="u-1"))
    [run] = api.wait_idle(sid)
    assert run["status"] == "succeeded"
    assert openai_stub.requests_for(LEARN) == []
    assert all(job["status"] in FINISHED for job in learning_jobs(api, agent))
    assert agent_memory(api, agent) == {"entries": {}, "version": 0}
    # turned on again, a later turn teaches; the earlier turn's items stay unlearned
    api.ok(api.patch("/v1/org/settings", {"agentMemory": True}))
    control = session_id(api, agent)
    api.turn(control, user("Always book refundable fares.", id="c-1"))
    jobs = wait_learned(api, agent, [control])
    [request] = openai_stub.requests_for(LEARN)
    assert [item["id"] for item in new_items(request)] == ["c-1"]
    assert sid not in [s for job in jobs for s in job["sessions"]]


def test_a_turn_that_only_ran_an_app_action_teaches_nothing(
    api: Api, openai_stub: OpenAIStub
) -> None:
    # S8, A2: a turn that only ran an App action is not learned from
    helper_is_stub(api)
    agent = api.agent()["id"]
    sid = session_id(api, agent)
    action = {"type": "app_action", "role": "user", "content": "Open the calendar.",
              "app": "calendar", "id": "x-1"}
    api.turn(sid, action)
    assert api.wait_idle(sid) == []
    assert openai_stub.requests_for(LEARN) == []
    assert learning_jobs(api, agent) == []
    # a teaching turn of the same session later is learned from, without the App action
    api.turn(sid, user("Always book refundable fares.", id="c-1"))
    jobs = wait_learned(api, agent, [sid])
    [request] = openai_stub.requests_for(LEARN)
    assert [item["id"] for item in new_items(request)] == ["c-1"]
    assert [item for job in jobs for item in job["read"]] == ["c-1"]


# --- A4, A6: checks ------------------------------------------------------------------------


def test_an_app_only_change_is_dropped_while_the_users_words_are_kept(
    api: Api, openai_stub: OpenAIStub
) -> None:
    # A4: App tool results are outside data
    helper_is_stub(api)
    agent = api.agent()["id"]
    sid = session_id(api, agent)
    openai_stub.script_for(
        LEARN,
        answer(
            change("friday-meetings", "Keep Fridays free of travel.", ["t-1"], "decision"),
            change("trains", "Book trains, not flights.", ["u-1"], "preference"),
            change("check-calendar", "Check the calendar before booking.", ["t-1", "u-1"]),
        ),
    )
    api.turn(
        sid,
        user("Book trains, not flights; check my calendar first.", id="u-1"),
        tool_result("Calendar: a standing meeting every Friday; keep Fridays free.", "t-1"),
    )
    [job] = wait_learned(api, agent, [sid])
    assert job["status"] == "succeeded"
    [dropped] = job["dropped"]
    assert dropped["key"] == "friday-meetings"
    assert dropped["op"] == "remember"
    assert "only tool results from Apps" in dropped["reason"]
    assert dropped["session"] == sid
    assert "Keep Fridays free of travel." in dropped["proposal"]
    entries = agent_memory(api, agent)["entries"]
    assert sorted(entries) == ["check-calendar", "trains"]
    assert sorted(
        (s["session"], s["item"]) for s in entries["check-calendar"]["sources"]
    ) == [(sid, "t-1"), (sid, "u-1")]
    assert entries["trains"]["sources"] == [{"session": sid, "item": "u-1"}]
    # the helper was told which item came from an App
    [request] = openai_stub.requests_for(LEARN)
    apps = {item["id"]: item.get("app") for item in new_items(request)}
    assert apps == {"u-1": None, "t-1": "calendar"}


def test_a_retracted_agent_entry_stays_retracted_until_a_person_remembers_it(
    api: Api, openai_stub: OpenAIStub
) -> None:
    # A6: only a person's Remember brings a retracted entry back
    helper_is_stub(api)
    agent = api.agent()["id"]
    agent_remember(api, agent, "seat", "Book window seats.", "preference")
    agent_forget(api, agent, "seat")
    assert agent_memory(api, agent)["version"] == 2
    sid = session_id(api, agent)
    openai_stub.script_for(
        LEARN, answer(change("seat", "Book window seats again.", ["u-1"], "preference"))
    )
    api.turn(sid, user("I like window seats.", id="u-1"))
    [job] = wait_learned(api, agent, [sid])
    assert job["status"] == "succeeded"
    [dropped] = job["dropped"]
    assert dropped["key"] == "seat"
    assert "retracted" in dropped["reason"]
    assert job["kept"] == []
    view = agent_memory(api, agent)
    assert view["entries"]["seat"]["status"] == "retracted"
    assert view["entries"]["seat"]["content"] == "Book window seats."
    assert [c["maker"] for c in agent_log(api, agent)] == ["person", "person"]

    back = agent_remember(api, agent, "seat", "Book aisle seats.", "preference")
    assert back["entries"]["seat"]["status"] == "active"
    assert back["entries"]["seat"]["content"] == "Book aisle seats."
    assert [c["maker"] for c in agent_log(api, agent)] == ["person", "person", "person"]


def test_a_members_retracted_private_entry_stays_retracted_against_learning(
    api: Api, openai_stub: OpenAIStub
) -> None:
    # A6, A9: ana's private entry, retracted by ana, is one learning from ana's session finds
    # retracted: the helper cannot bring it back, and the log holds ana's changes only
    helper_is_stub(api)
    agent = api.agent(shared=True)["id"]
    agent_remember(api, agent, "seat", "Ana prefers aisle seats.", "preference", about="ana",
                   visibility="private")
    agent_forget(api, agent, "seat", about="ana")
    sid = session_id(api, agent)
    openai_stub.script_for(LEARN, answer(change(
        "seat", "Ana prefers aisle seats again.", ["u-1"], "preference", about="ana",
        visibility="private")))
    api.turn(sid, user("I still like aisle seats.", id="u-1"))
    [job] = wait_learned(api, agent, [sid])
    assert job["status"] == "succeeded", job
    [dropped] = job["dropped"]
    assert dropped["key"] == "seat"
    assert "retracted" in dropped["reason"]
    view = agent_memory(api, agent)
    assert view["entries"]["seat@ana"]["status"] == "retracted"
    assert view["entries"]["seat@ana"]["content"] == "Ana prefers aisle seats."
    assert [c["maker"] for c in agent_log(api, agent)] == ["person", "person"]


# --- A5, A9: who said it ---------------------------------------------------------------


def test_a_members_learning_error_shows_only_the_sessions_they_may_reach(
    api: Api, member: Api, platform: Api, openai_stub: OpenAIStub
) -> None:
    # A9, S11: a job that learned from ana's and ben's sessions, and whose helper failed on
    # both, records each session's error; each person reads the error of their own session
    # only (another's may quote it), the service token both
    helper_is_stub(api)
    agent = api.agent(shared=True)["id"]
    ana, ben = session_id(api, agent), session_id(member, agent)
    gate, started = threading.Event(), threading.Event()
    openai_stub.script_for(CONSOLIDATE, Reply(gate=gate, started=started), answer())
    refused = Reply(content="refused: over quota", status=400)
    openai_stub.script_for(LEARN, refused, refused)
    try:
        api.turn(ana, user("Book trains where you can.", id="a-1"))
        wait_event(started, "ana's session consolidates")
        member.turn(ben, user("Never book night flights for me.", id="b-1"))
        member.wait_idle(ben)
    finally:
        gate.set()
    [job] = wait_learned(platform, agent, [ana, ben])
    assert job["status"] == "failed", job
    named = {person: learning_jobs(client, agent)[0]["error"]
             for person, client in (("service", platform), ("ana", api), ("ben", member))}
    assert {person: (ana in error, ben in error) for person, error in named.items()} == {
        "service": (True, True), "ana": (True, False), "ben": (False, True)}, named
    assert "over quota" in named["ana"]


def test_a_private_change_about_ana_is_never_seen_by_ben(
    api: Api, member: Api, platform: Api, openai_stub: OpenAIStub
) -> None:
    # A5, A9: learned in ana's session, private to ana; ben never sees it
    helper_is_stub(api)
    agent = api.agent(shared=True)["id"]
    ana = session_id(api, agent)
    openai_stub.script_for(
        LEARN,
        answer(change("seat", "Ana prefers aisle seats.", ["a-1"], "preference",
                      about="ana", visibility="private")),
    )
    api.turn(ana, user("I prefer aisle seats.", id="a-1"))
    [job] = wait_learned(api, agent, [ana])
    assert job["status"] == "succeeded", job
    assert job["dropped"] == []

    mine = agent_memory(api, agent)["entries"]  # a private entry is listed as key@person
    assert mine["seat@ana"]["content"] == "Ana prefers aisle seats."
    assert mine["seat@ana"]["about"] == "ana"
    assert mine["seat@ana"]["visibility"] == "private"
    assert mine["seat@ana"]["sources"] == [{"session": ana, "item": "a-1"}]
    assert "seat@ana" in agent_memory(platform, agent)["entries"]

    ben = session_id(member, agent)
    theirs = agent_memory(member, agent)
    assert theirs["entries"] == {}
    assert "aisle" not in json.dumps(theirs)
    assert all("seat" not in c["keys"] for c in agent_log(member, agent))
    shown = instructions(member, ben)
    assert shown["included"]["agent"] == []
    assert "aisle" not in shown["memory"]
    assert "aisle" not in json.dumps(learning_jobs(member, agent))
    assert "seat@ana" in instructions(api, ana)["included"]["agent"]

    # a change about ana proposed from ben's session is dropped
    openai_stub.script_for(
        LEARN,
        answer(change("ana-hotel", "Ana wants a hotel near the station.", ["b-1"],
                      "preference", about="ana", visibility="private")),
    )
    member.turn(ben, user("Ana told me she wants a hotel near the station.", id="b-1"))
    jobs = wait_learned(member, agent, [ben], jobs=2)
    assert len(openai_stub.requests_for(LEARN)) == 2
    ben_request = openai_stub.requests_for(LEARN)[1]
    assert 'PERSON: "ben"' in prompt(ben_request)
    assert "aisle" not in prompt(ben_request)  # ben's session's helper call is not shown it
    [latest] = [job for job in jobs if ben in job["sessions"]]
    [dropped] = latest["dropped"]
    assert dropped["key"] == "ana-hotel"
    assert "only from that person's own session" in dropped["reason"]
    assert latest["kept"] == []
    assert "ana-hotel" not in agent_memory(api, agent)["entries"]
    assert agent_memory(platform, agent)["version"] == 1


def test_about_must_name_a_person_of_the_org_and_private_must_name_about(
    api: Api, member: Api, openai_stub: OpenAIStub
) -> None:
    # A5, A9: `about` is a person of the org; a private change names whom it is about
    helper_is_stub(api, consolidation=False)
    agent = api.agent(shared=True)["id"]
    sid = session_id(api, agent)
    openai_stub.script_for(
        LEARN,
        answer(
            change("zed-seat", "Zed prefers aisle seats.", ["u-1"], "preference",
                   about="zed", visibility="private"),
            change("nobody-seat", "Someone prefers aisle seats.", ["u-1"], "preference",
                   visibility="private"),
            change("ben-seat", "Ben prefers aisle seats.", ["u-1"], "preference",
                   about="ben", visibility="shared"),
            change("ana-seat", "Ana prefers window seats.", ["u-1"], "preference",
                   about="ana", visibility="private"),
        ),
    )
    api.turn(sid, user("I prefer window seats; Ben likes the aisle.", id="u-1"))
    [job] = wait_learned(api, agent, [sid])
    reasons = {d["key"]: d["reason"] for d in job["dropped"]}
    assert sorted(reasons) == ["ben-seat", "nobody-seat", "zed-seat"]
    assert "about names no person of the org" in reasons["zed-seat"]
    assert "names the person it is about" in reasons["nobody-seat"]
    assert "only from that person's own session" in reasons["ben-seat"]
    assert list(agent_memory(api, agent)["entries"]) == ["ana-seat@ana"]  # listed as key@person
    assert agent_memory(member, agent)["entries"] == {}


# --- S10, S11 for agents ----------------------------------------------------------------


def test_a_credential_from_the_helper_is_dropped_and_stored_nowhere(
    api: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # S10: no credentials, not even in the record of what was dropped
    helper_is_stub(api)
    agent = api.agent()["id"]
    sid = session_id(api, agent)
    secret = "sk-proj-" + "Zx9Yw8Vu7T" * 4
    openai_stub.script_for(
        LEARN,
        answer(
            change("booking-key", f"Book with the API key {secret}", ["u-1"]),
            change("company-account", "Book with the company account.", ["u-1"]),
        ),
    )
    api.turn(sid, user("Book with the company account.", id="u-1"))
    [job] = wait_learned(api, agent, [sid])
    assert job["status"] == "succeeded"
    [dropped] = job["dropped"]
    assert dropped["key"] == "booking-key"
    assert dropped["reason"].startswith("holds a credential")
    assert secret not in json.dumps(learning_jobs(api, agent))
    assert list(agent_memory(api, agent)["entries"]) == ["company-account"]
    assert graph.value(
        "MATCH (n) UNWIND keys(n) AS k WITH n, k "
        "WHERE n[k] IS :: STRING AND n[k] CONTAINS $secret RETURN count(*)",
        secret=secret,
    ) == 0
    assert stored_anywhere(graph, secret) == 0
    assert stored_anywhere(graph, "company account") > 0  # the search does find what is kept


def test_a_failed_helper_call_is_recorded_and_retried_by_the_next_job(
    api: Api, openai_stub: OpenAIStub
) -> None:
    # S11 for agents: the job fails with its error; its items stay to learn from
    helper_is_stub(api)
    agent = api.agent()["id"]
    sid = session_id(api, agent)
    openai_stub.script_for(LEARN, Reply(status=500))
    api.turn(sid, user("Always book aisle seats.", id="u-1"))
    [failed] = wait_learned(api, agent, [sid])
    assert failed["status"] == "failed"
    assert failed["error"]
    assert failed["tried"] == ["u-1"]
    assert failed["read"] == []
    assert failed["kept"] == []
    assert agent_memory(api, agent)["version"] == 0
    assert len(openai_stub.requests_for(LEARN)) == 1

    openai_stub.script_for(
        LEARN,
        answer(
            change("aisle", "Book aisle seats.", ["u-1"], "preference"),
            change("refundable", "Book refundable fares.", ["u-2"], "preference"),
        ),
    )
    api.turn(sid, user("Always book refundable fares.", id="u-2"))
    jobs = wait_learned(api, agent, [sid], jobs=2)
    latest, earlier = jobs
    assert earlier["id"] == failed["id"]
    assert earlier["status"] == "failed"
    assert latest["status"] == "succeeded"
    assert latest["read"] == ["u-1", "u-2"]
    retry = openai_stub.requests_for(LEARN)[1]
    assert [item["id"] for item in new_items(retry)] == ["u-1", "u-2"]
    entries = agent_memory(api, agent)["entries"]
    assert sorted(entries) == ["aisle", "refundable"]
    assert entries["aisle"]["sources"] == [{"session": sid, "item": "u-1"}]


def test_items_of_one_id_on_two_branches_are_learned_in_calls_of_their_own(
    api: Api, openai_stub: OpenAIStub
) -> None:
    # A3, A4, A7: an item id is unique on a branch only. A turn left to learn on a branch a
    # revert left and one on the new branch hold the same id; the helper names items by id, so
    # each is learned in a call of its own: an entry cites the item it came from, and one only
    # an App's result supports is dropped (A4) while the user's words are kept.
    helper_is_stub(api, consolidation=False)
    agent = api.agent()["id"]
    sid = session_id(api, agent)
    start = api.view(sid)["session"]["head"]
    openai_stub.script_for(LEARN, Reply(status=500))  # its items stay to learn
    api.turn(sid, user("I prefer aisle seats."))
    assert wait_learned(api, agent, [sid])[0]["status"] == "failed"
    head = api.view(sid)["session"]
    api.ok(api.post(f"/v1/sessions/{sid}/revert", {
        "expected": head["head"], "revision": head["revision"], "to": start}))
    openai_stub.script_for(
        LEARN,
        answer(change("seat", "Book aisle seats.", ["i-01"], "preference")),
        answer(change("contact", "Reach the customer by email.", ["i-01"], "preference")),
    )
    api.turn(sid, {"type": "tool_result", "role": "tool", "app": "crm",
                   "content": "CRM: the customer prefers email."}, user("Thanks."))
    [job, _] = wait_learned(api, agent, [sid], jobs=2)
    assert job["status"] == "succeeded"
    asked = openai_stub.requests_for(LEARN)[-2:]
    assert [[(i["id"], i["content"]) for i in new_items(r)] for r in asked] == [
        [("i-01", "I prefer aisle seats.")],
        [("i-01", "CRM: the customer prefers email."), ("i-02", "Thanks.")]]
    entries = agent_memory(api, agent)["entries"]
    assert list(entries) == ["seat"]
    assert entries["seat"]["sources"] == [{"session": sid, "item": "i-01"}]
    [dropped] = job["dropped"]
    assert dropped["key"] == "contact"
    assert "only tool results from Apps" in dropped["reason"]
    assert sorted(job["read"]) == ["i-01", "i-01", "i-02"]


def test_a_persons_edit_while_the_helper_works_wins(
    api: Api, openai_stub: OpenAIStub
) -> None:
    # S7 for agents: the model's change to an entry a person edited meanwhile is dropped
    helper_is_stub(api, consolidation=False)
    agent = api.agent()["id"]
    agent_remember(api, agent, "seat", "Book window seats.", "preference")
    sid = session_id(api, agent)
    gate, started = threading.Event(), threading.Event()
    openai_stub.script_for(
        LEARN,
        answer(change("seat", "Book middle seats.", ["u-1"], "preference"),
               gate=gate, started=started),
    )
    try:
        api.turn(sid, user("Middle seats are fine.", id="u-1"))
        wait_event(started, "the helper is asked")
        edited = agent_remember(api, agent, "seat", "Book aisle seats.", "preference")
        assert edited["version"] == 2
    finally:
        gate.set()
    [job] = wait_learned(api, agent, [sid])
    assert job["status"] == "succeeded"
    assert job["kept"] == []
    [dropped] = job["dropped"]
    assert dropped["key"] == "seat"
    assert "changed while the model worked" in dropped["reason"]
    view = agent_memory(api, agent)
    assert view["version"] == 2
    assert view["entries"]["seat"]["content"] == "Book aisle seats."
    assert [c["maker"] for c in agent_log(api, agent)] == ["person", "person"]
    assert job["read"] == ["u-1"]  # the item is learned from, though nothing was kept


def test_a_worker_whose_lease_ran_out_learns_nothing_of_the_job_another_claimed(
    api: Api, server: RunningServer, graph: Graph, openai_stub: OpenAIStub,
    start_server: Callable[..., RunningServer], monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A2, A3: the first worker's helper answers after its lease ran out and another process
    # claimed the job again. The first applies and records nothing; the agent learns what the
    # second claim's helper proposed, once.
    helper_is_stub(api, consolidation=False)
    agent = api.agent()["id"]
    sid = session_id(api, agent)
    first_gate, first_asked = threading.Event(), threading.Event()
    second_gate, second_asked = threading.Event(), threading.Event()
    openai_stub.script_for(
        LEARN,
        answer(change("seat", "Book window seats.", ["u-1"], "preference"),
               gate=first_gate, started=first_asked),
        answer(change("seat", "Book aisle seats.", ["u-1"], "preference"),
               gate=second_gate, started=second_asked),
    )
    work = Learning.work
    worked = threading.Event()

    async def work_and_tell(self: Learning, job: str, attempt: int) -> None:
        await work(self, job, attempt)  # committed, or nothing written
        if attempt == 1:
            worked.set()

    first_claim_renews_nothing(monkeypatch)
    monkeypatch.setattr(Learning, "work", work_and_tell)
    first = start_server(run_lease_seconds=1)
    second = start_server(run_lease_seconds=30)  # (its claim holds however loaded the machine)
    try:
        with claims_nothing(server):
            with claims_nothing(second):
                api.turn(sid, user("Aisle seats, please.", id="u-1"))
                wait_event(first_asked, "the first worker's helper is asked")
            with claims_nothing(first):
                wait_event(second_asked, "another worker claims the job", timeout=60)
                first_gate.set()
                wait_event(worked, "the first worker ends its work", timeout=30)
                assert graph.rows("MATCH (j:LearningJob) RETURN j.status AS status, "
                                  "j.attempts AS attempts") == [
                    {"status": "running", "attempts": 2}]
                assert agent_memory(api, agent)["entries"] == {}
                assert learned_counts(graph) == {}
                second_gate.set()
                [job] = wait_learned(api, agent, [sid])
    finally:
        first_gate.set()
        second_gate.set()
    assert (job["status"], job["read"], job["attempts"]) == ("succeeded", ["u-1"], 2)
    view = agent_memory(api, agent)
    assert view["version"] == 1
    assert view["entries"]["seat"]["content"] == "Book aisle seats."
    assert learned_counts(graph) == {"u-1": 1}


# --- the built-in model -----------------------------------------------------------------


def test_the_builtin_helper_learns_a_private_preference_with_no_key_and_no_network(
    start_server: Callable[..., RunningServer],
    server: RunningServer,
    tokens: Callable[[str, str], str],
    openai_stub: OpenAIStub,
) -> None:
    # A2, A5, A9: a new org's helperModel is `builtin`; it needs no key and no network
    offline = start_server(openai_api_key=None, openai_base_url="http://127.0.0.1:9/v1")
    ana = Api(offline.url, tokens("acme", "ana"))
    ben = Api(offline.url, tokens("acme", "ben"))
    try:
        with claims_nothing(server):  # only the offline server works on this test's jobs
            assert ana.ok(ana.get("/v1/org/settings"))["helperModel"] == "builtin"
            agent = ana.agent(shared=True)["id"]
            sid = session_id(ana, agent)
            ana.turn(sid, user("I prefer window seats.", id="u-1"))
            [job] = wait_learned(ana, agent, [sid])
            assert job["status"] == "succeeded", job
            assert job["model"] == "builtin"
            view = agent_memory(ana, agent)
            [(key, entry)] = view["entries"].items()
            assert entry["kind"] == "preference"
            assert "window seats" in entry["content"]
            assert entry["about"] == "ana"
            assert entry["visibility"] == "private"
            assert entry["sources"] == [{"session": sid, "item": "u-1"}]
            assert key == f"{entry['key']}@ana"  # listed as key@person
            assert agent_memory(ben, agent)["entries"] == {}
            assert openai_stub.requests == []  # no request to any model server
    finally:
        ana.http.close()
        ben.http.close()


# --- GraphQL -----------------------------------------------------------------------------

STORY = """
query($a: ID!) {
  agent(id: $a) {
    memory {
      entries { nodes {
        key
        changes { nodes {
          maker
          job { id status }
          sources { session { id } item { id turn { id session { id } } } }
        } }
      } }
    }
    learningJobs { nodes { id status model read sessions dropped { key reason } changes { key } } }
  }
}
"""


def test_graphql_leads_from_an_agent_entry_back_to_the_job_turn_and_session(
    api: Api, openai_stub: OpenAIStub
) -> None:
    # A3: from an agent entry to the job, the turn and the session
    helper_is_stub(api)
    agent = api.agent()["id"]
    sid = session_id(api, agent)
    openai_stub.script_for(
        LEARN,
        answer(
            change("confirm-dates", "Confirm the travel dates before booking.", ["u-1"]),
            change("dates", "The trip is in May.", ["u-1"], "fact"),
        ),
    )
    turn = api.turn(sid, user("Always confirm dates before booking; we go in May.",
                              id="u-1"))["turn"]
    [job] = wait_learned(api, agent, [sid])

    body = flat(api.graphql(STORY, a=agent))
    assert "errors" not in body, body
    found = body["data"]["agent"]
    [entry] = found["memory"]["entries"]
    assert entry["key"] == "confirm-dates"
    [made] = entry["changes"]
    assert made["maker"] == "CONSOLIDATION"
    assert made["job"] == {"id": job["id"], "status": "SUCCEEDED"}
    assert made["sources"] == [
        {"session": {"id": sid},
         "item": {"id": "u-1", "turn": {"id": turn["id"], "session": {"id": sid}}}}
    ]
    [learned] = found["learningJobs"]
    assert learned["id"] == job["id"]
    assert learned["status"] == "SUCCEEDED"
    assert learned["model"] == STUB
    assert learned["read"] == ["u-1"]
    assert learned["sessions"] == [sid]
    assert learned["changes"] == [{"key": "confirm-dates"}]
    [dropped] = learned["dropped"]
    assert dropped["key"] == "dates"
    assert "kind" in dropped["reason"]  # A1: facts stay in session memory


def test_another_members_learning_is_left_out_of_their_job_view(
    api: Api, member: Api, openai_stub: OpenAIStub
) -> None:
    # A9: the learning view, filtered for a person: only their own sessions' items
    helper_is_stub(api, consolidation=False)
    agent = api.agent(shared=True)["id"]
    sid = session_id(api, agent)
    openai_stub.script_for(
        LEARN,
        answer(change("seat", "Ana prefers aisle seats.", ["a-1"], "preference",
                      about="ana", visibility="private")),
    )
    api.turn(sid, user("I prefer aisle seats.", id="a-1"))
    [job] = wait_learned(api, agent, [sid])
    assert job["read"] == ["a-1"]
    assert len(job["kept"]) == 1
    [seen] = learning_jobs(member, agent)
    assert seen["id"] == job["id"]
    assert seen["read"] == []
    assert seen["kept"] == []
    assert seen["sessions"] == []
    body = flat(member.graphql(STORY, a=agent))
    assert "errors" not in body, body
    assert body["data"]["agent"]["memory"]["entries"] == []
    assert body["data"]["agent"]["learningJobs"][0]["changes"] == []
    # and ben's own direct Remember cannot reach ana's private entry either
    response = agent_command(member, agent, {"_tag": "Forget", "key": "seat"})
    assert response.status_code == 409, response.text
