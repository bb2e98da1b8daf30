"""Erasure of a person's data through HTTP and GraphQL (SPEC section 7).

Unique marker strings go in through every write path (turn items, a person's Remember,
consolidation and learning by the scripted model, an agent Remember about the person, a fork,
a promotion); after the erasure a scan of every property of every node and relationship finds
none of the erased person's, and every one of another member's.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import httpx
import pytest

from app.memory.changes.checks import ERASED_SINCE, ERASED_WITHHELD
from app.store.database import Target
from app.store.erasures import ErasureRepository
from app.store.turns import TurnRepository
from tests.api.test_agent_memory import (
    agent_command,
    agent_forget,
    agent_memory,
    agent_remember,
    assert_error,
    instructions,
    post_agent,
    remember,
)
from tests.api.test_consolidation import stored_anywhere
from tests.api.test_learning import (
    CONSOLIDATE,
    LEARN,
    answer,
    change,
    helper_is_stub,
    learning_jobs,
    new_items,
    wait_event,
    wait_learned,
)
from tests.api.test_promotion import subagent
from tests.api.test_provenance import STORY, SUPPORTS
from tests.conftest import ROOT, Api, Graph, RunningServer, flat, user
from tests.openai_stub import OpenAIStub, Reply
from tests.test_cli import CLI, run_cli

Body = dict[str, Any]

ANA = ["ANA-TURN-1f", "ANA-CONS-2f", "ANA-LEARN-3f", "ANA-REM-4f", "ANA-ABOUT-5f",
       "ANA-FORK-6f", "ANA-SUB-7f", "ANA-MINE-8f", "ANA-AGAIN-9f", "ANA-DROP-10f",
       "ANA-LDROP-11f"]
BEN = ["BEN-TURN-1f", "BEN-CONS-2f", "BEN-LEARN-3f", "BEN-REM-4f", "BEN-ABOUT-5f"]
# what a person says in a key is theirs too (markers in keys, by the same write paths)
ANA_KEYS = ["ANA-KEY-TRIP-1k", "ANA-KEY-HABIT-2k", "ANA-KEY-NOTE-3k", "ANA-KEY-LIKES-4k",
            "ANA-KEY-FORK-5k", "ANA-KEY-ROUTINE-6k", "ANA-KEY-MINE-7k", "ANA-KEY-DROP-8k",
            "ANA-KEY-LDROP-9k"]
BEN_KEYS = ["BEN-KEY-TRIP-1k", "BEN-KEY-HABIT-2k", "BEN-KEY-NOTE-3k", "BEN-KEY-LIKES-4k"]


def holding_value(graph: Graph, value: str) -> int:
    """How many nodes (but Erasure records) and relationships hold `value` as a property."""
    nodes = graph.value(
        "MATCH (x) WHERE NOT x:Erasure AND any(k IN keys(x) WHERE x[k] = $v) RETURN count(x)",
        v=value,
    )
    edges = graph.value(
        "MATCH ()-[x]->() WHERE any(k IN keys(x) WHERE x[k] = $v) RETURN count(x)", v=value
    )
    return int(nodes) + int(edges)


def teach(client: Api, openai_stub: OpenAIStub, agent: str, sid: str, marks: list[str],
          keys: list[str], about: str) -> None:
    """A turn (marks[0]) that the scripted model consolidates (marks[1] under keys[0]) and
    learns from (marks[2] under keys[1], shared, supported only by the turn's item)."""
    openai_stub.script_for(
        CONSOLIDATE, answer(change(keys[0], marks[1], [f"{about}-u1"], kind="fact"))
    )
    openai_stub.script_for(LEARN, answer(change(keys[1], marks[2], [f"{about}-u1"])))
    client.turn(sid, user(f"Hello {marks[0]}", id=f"{about}-u1"))
    wait_learned(client, agent, [sid], jobs=1)


def plant(api: Api, member: Api, platform: Api, openai_stub: OpenAIStub) -> dict[str, str]:
    helper_is_stub(platform)
    agent = platform.agent(shared=True)["id"]
    ana = api.session(agent)["session"]["id"]
    ben = member.session(agent)["session"]["id"]
    teach(api, openai_stub, agent, ana, ANA, ANA_KEYS, "ana")
    # (ben's turn is shown what was learned from ana's: its `shownAgent` lists her key)
    teach(member, openai_stub, agent, ben, BEN, BEN_KEYS, "ben")
    api.remember(ana, ANA_KEYS[2], ANA[3])
    member.remember(ben, BEN_KEYS[2], BEN[3])
    agent_remember(platform, agent, ANA_KEYS[3], ANA[4], "preference", about="ana")
    agent_remember(platform, agent, BEN_KEYS[3], BEN[4], "preference", about="ben")
    agent_remember(platform, agent, ANA_KEYS[6], ANA[7], "preference", about="ana",
                   visibility="private")
    # ana's next turn is shown her note and her private entry (`key@ana`); the model's
    # proposals cite an item read already, so the run and the learning job drop them, keys kept
    openai_stub.script_for(
        CONSOLIDATE, answer(change(ANA_KEYS[7], ANA[9], ["ana-u1"], kind="fact"))
    )
    openai_stub.script_for(LEARN, answer(change(ANA_KEYS[8], ANA[10], ["ana-u1"])))
    api.turn(ana, user(f"Again {ANA[8]}", id="ana-u2"))
    wait_learned(platform, agent, [ana], jobs=3)
    fork = api.ok(api.post(f"/v1/sessions/{ana}/fork", {}), 201)["session"]["id"]
    api.remember(fork, ANA_KEYS[4], ANA[5])
    sub = api.session(agent, kind="subagent", parent=ana)["session"]["id"]
    api.remember(sub, ANA_KEYS[5], ANA[6], "procedure")
    promoted = api.ok(api.post(f"/v1/sessions/{sub}/promote", {}), 201)["agent"]["id"]
    return {"agent": agent, "ana": ana, "ben": ben, "fork": fork, "promoted": promoted}


def listed_names(graph: Graph) -> dict[str, int]:
    """How many times a turn lists a name other than that of a change it saw (a session
    change's key; an agent change's key, `@owner` for a private one), and how many erased
    entries hold a key that is not an opaque key of their own, on them and their changes."""
    session = graph.value(
        "MATCH (t:Turn)-[:SAW]->(c:Change) WHERE NOT c.key IN t.shown RETURN count(*)"
    )
    agent = graph.value(
        "MATCH (t:Turn)-[:SAW]->(c:AgentChange) "
        "WITH t, CASE WHEN coalesce(c.owner, '') = '' THEN c.key "
        "ELSE c.key + '@' + c.owner END AS name "
        "WHERE NOT name IN t.shownAgent RETURN count(*)"
    )
    rows = graph.rows(
        "MATCH (e) WHERE (e:Entry OR e:AgentEntry) AND e.erased "
        "OPTIONAL MATCH (c)-[:OF_ENTRY]->(e) "
        "RETURN e.key AS key, collect(DISTINCT c.key) AS changes"
    )
    keys = [row["key"] for row in rows]
    opaque = sum(
        1 for row in rows
        if not row["key"].startswith("erased-") or row["changes"] not in ([], [row["key"]])
    )
    return {"session": int(session), "agent": int(agent), "erased": len(rows),
            "unlike": opaque + len(keys) - len(set(keys))}


def bens_views(member: Api, made: dict[str, str]) -> Body:
    return {
        "session": member.view(made["ben"]),
        "instructions": instructions(member, made["ben"]),
        "agent": agent_memory(member, made["agent"])["entries"],
        # stories: each entry's changes, what they cite, and what each item supports
        "story": flat(member.graphql(STORY, id=made["ben"])),
        "supports": flat(member.graphql(SUPPORTS, id=made["ben"])),
        # (a hit's score is reckoned from the matches the reader may read: they change)
        "search": sorted(
            (json.dumps({k: v for k, v in hit.items() if k != "score"}, sort_keys=True)
             for hit in member.ok(member.get("/v1/search", params={"q": "BEN-REM-4f"}))["hits"]),
        ),
    }


def test_erasing_a_person_leaves_no_marker_of_theirs_and_every_marker_of_others(
    api: Api, member: Api, platform: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    made = plant(api, member, platform, openai_stub)
    for mark in ANA + BEN + ANA_KEYS + BEN_KEYS:
        assert stored_anywhere(graph, mark) > 0, mark
    assert listed_names(graph) == {"session": 0, "agent": 0, "erased": 0, "unlike": 0}
    assert graph.value(  # the run's and the learning job's dropped proposals keep their keys
        "MATCH (d:DroppedChange) WHERE d.key IN $keys RETURN count(d)", keys=ANA_KEYS[7:]
    ) == 2
    before = bens_views(member, made)
    hers = (ANA_KEYS[1], ANA_KEYS[3])
    assert set(hers) <= set(agent_memory(platform, made["agent"])["entries"])

    # only a service token erases
    denied = member.post("/v1/org/persons/ana/erase")
    assert denied.status_code == 403, denied.text
    assert denied.json()["_tag"] == "Forbidden"

    erased = platform.ok(platform.post("/v1/org/persons/ana/erase"))["erasure"]
    assert erased["person"] == "ana"
    assert set(erased) == {"id", "person", "at", "counts"}
    counts = erased["counts"]
    assert set(counts) == {"sessions", "items", "entries", "agentEntries", "changes", "jobs"}
    assert counts["sessions"] == 3  # her session, its fork, the subagent session
    assert counts["items"] >= 4
    assert counts["entries"] >= 4
    assert counts["changes"] >= 4
    # learned from her, about her (shared and private), promoted from her
    assert counts["agentEntries"] == 4

    # no marker of hers anywhere, in content or keys, every one of ben's still there; her id
    # is no stored value
    for mark in ANA + ANA_KEYS:
        assert stored_anywhere(graph, mark) == 0, mark
    for mark in BEN + BEN_KEYS:
        assert stored_anywhere(graph, mark) > 0, mark
    assert holding_value(graph, "ana") == 0
    # each erased entry has an opaque key of its own, which every change of it has too, and
    # each turn lists it for the change it saw
    names = listed_names(graph)
    assert names["erased"] >= 8  # her five session entries (a fork's copy too), four agents'
    assert names == {"session": 0, "agent": 0, "erased": names["erased"], "unlike": 0}
    # the structure stays: tombstones, with their versions and provenance edges
    assert graph.value("MATCH (i:Item {erased: true})-[:IN_TURN]->(:Turn) RETURN count(i)") > 0
    assert graph.value(
        "MATCH (c:Change {erased: true})-[:CITES]->(:Item {erased: true}) RETURN count(c)"
    ) > 0
    assert graph.value(
        "MATCH (c:Change {erased: true}) WHERE c.content IS NOT NULL RETURN count(c)"
    ) == 0

    # ben's views answer as before, but for the agent entries learned from or about her
    after = bens_views(member, made)
    assert after["session"] == before["session"]
    assert after["search"] == before["search"]
    assert after["agent"] == {k: v for k, v in before["agent"].items() if k not in hers}
    shown, was = after["instructions"]["included"], before["instructions"]["included"]
    assert set(hers) <= set(was["agent"])
    assert shown == {"session": was["session"],
                     "agent": [k for k in was["agent"] if k not in hers]}
    assert not any(mark in after["instructions"]["memory"] for mark in ANA)
    # erased entries leave the service's views too
    assert set(agent_memory(platform, made["agent"])["entries"]) == {BEN_KEYS[1], BEN_KEYS[3]}
    assert agent_memory(platform, made["promoted"])["entries"] == {}
    for sid in (made["ana"], made["fork"]):
        assert platform.get(f"/v1/sessions/{sid}").status_code == 404
    listed = platform.ok(platform.get("/v1/sessions"))["sessions"]
    assert [s["session"]["id"] if "session" in s else s["id"] for s in listed] == [made["ben"]]
    hits = platform.ok(platform.get("/v1/search", params={"q": "note"}))["hits"]
    assert [hit["entry"]["session"] for hit in hits] == [made["ben"]]

    # her tokens are revoked
    assert api.get("/v1/sessions").status_code == 401

    # the record, listed for a service token only; asked again, the same erasure answers
    assert platform.ok(platform.get("/v1/org/erasures"))["erasures"] == [erased]
    assert member.get("/v1/org/erasures").status_code == 403
    assert platform.ok(platform.post("/v1/org/persons/ana/erase"))["erasure"] == erased
    assert platform.post("/v1/org/persons/nobody/erase").status_code == 404


def test_a_kept_nested_view_lists_no_erased_agent_key_after_the_erasure(
    api: Api, member: Api, platform: Api, graph: Graph
) -> None:
    # A turn shown an agent entry about ana lists its key (`shownAgent`). Once she is erased,
    # the nested view of that turn's session lists the entry's opaque key, as a fresh read
    # does, also where this process answered the view before the erasure and kept it
    agent = platform.agent(shared=True)["id"]
    agent_remember(platform, agent, "ANA-DIET-9k", "Ana eats no meat.", "preference",
                   about="ana")
    sid = member.session(agent)["session"]["id"]
    member.turn(sid, user("Our budget is 1500 EUR."))
    member.wait_idle(sid)
    query = """query($id: ID!) { session(id: $id) { memory { entries(first: 20) { nodes {
        key sources { turn { id shownAgent } } } } } } }"""

    def shown() -> set[str]:
        entries = flat(member.graphql(query, id=sid))["data"]["session"]["memory"]["entries"]
        return {name for entry in entries for source in entry["sources"]
                if source["turn"] is not None for name in source["turn"]["shownAgent"]}

    assert shown() == {"ANA-DIET-9k"}
    assert shown() == {"ANA-DIET-9k"}  # the view this process keeps
    platform.ok(platform.post("/v1/org/persons/ana/erase"))
    [opaque] = shown()
    assert opaque.startswith("erased-")
    assert graph.value(
        "MATCH (:Session {id: $sid})<-[:IN_SESSION]-(t:Turn) RETURN t.shownAgent", sid=sid
    ) == [opaque]


def test_the_erase_person_mutation_answers_the_erasure_and_refuses_a_person(
    api: Api, member: Api, platform: Api, graph: Graph
) -> None:
    api.remember(api.session()["session"]["id"], "note", "ANA-GQL-1f")
    mutation = "mutation($p: ID!) { erasePerson(person: $p) { id person counts { items } } }"
    [error] = member.graphql(mutation, p="ana")["errors"]
    assert error["extensions"]["code"] == "FORBIDDEN"
    assert stored_anywhere(graph, "ANA-GQL-1f") > 0

    data = platform.graphql(mutation, p="ana")["data"]
    assert data["erasePerson"]["person"] == "ana"
    assert data["erasePerson"]["counts"]["items"] == 1
    assert stored_anywhere(graph, "ANA-GQL-1f") == 0


def test_an_erasure_that_stopped_half_way_finishes_when_asked_again(
    api: Api, platform: Api, graph: Graph, server: RunningServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    agent = platform.agent(shared=True)["id"]
    for n in range(2):
        sid = api.session(agent)["session"]["id"]
        api.remember(sid, "note", f"ANA-HALF-{n}f")
    agent_remember(platform, agent, "ANA-HALF-KEY-8k", "ANA-HALF-9f", "preference",
                   about="ana")

    def crash(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("the process died here")

    # the sessions are erased, then the process dies before the agents
    monkeypatch.setattr(ErasureRepository, "erase_agent_entries", crash)
    assert platform.post("/v1/org/persons/ana/erase").status_code == 500
    assert stored_anywhere(graph, "ANA-HALF-0f") == 0
    assert stored_anywhere(graph, "ANA-HALF-9f") > 0
    assert stored_anywhere(graph, "ANA-HALF-KEY-8k") > 0
    opaque = "MATCH (e:Entry)<-[:OF_ENTRY]-(c:Change) RETURN collect([e.key, c.key])"
    keys = graph.value(opaque)
    assert len(keys) == 2
    assert all(e == c and e.startswith("erased-") for e, c in keys)
    monkeypatch.undo()

    erased = platform.ok(platform.post("/v1/org/persons/ana/erase"))["erasure"]
    assert stored_anywhere(graph, "ANA-HALF-9f") == 0
    assert stored_anywhere(graph, "ANA-HALF-KEY-8k") == 0
    assert sorted(graph.value(opaque)) == sorted(keys)  # the resumed erasure keeps its keys
    assert erased["counts"]["sessions"] == 2  # counted once, across both attempts
    assert erased["counts"]["agentEntries"] == 1
    assert platform.ok(platform.get("/v1/org/erasures"))["erasures"] == [erased]


def test_a_session_for_the_person_is_refused_while_their_erasure_runs(
    api: Api, platform: Api, graph: Graph, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # SPEC 7: every session of the person is erased, and what came of them, while the erasure
    # runs too: no session of theirs starts (new, or a fork), and an agent promoted from one
    # of their sessions loses what it holds of it
    agent = platform.agent(shared=True)["id"]
    sid = api.session(agent)["session"]["id"]
    api.remember(sid, "note", "ANA-RACE-1f")
    sub = api.session(agent, kind="subagent", parent=sid)["session"]["id"]
    api.remember(sub, "refunds", "ANA-RACE-2f", kind="procedure")
    during: list[httpx.Response] = []
    scope = ErasureRepository.scope

    async def then_more_of_hers(
        self: ErasureRepository, org: str, person: str
    ) -> tuple[list[str], list[str]]:
        found = await scope(self, org, person)  # what the erasure goes through
        if not during:  # (the scope is read again after the parts)
            for client, path, body in (
                (api, "/v1/sessions", {"agent": agent}),
                (platform, "/v1/sessions", {"agent": agent, "person": "ana"}),
                (api, f"/v1/sessions/{sid}/fork", {}),
                (platform, f"/v1/sessions/{sub}/promote", {"name": "refund desk"}),
            ):
                during.append(await asyncio.to_thread(client.post, path, body))
        return found

    monkeypatch.setattr(ErasureRepository, "scope", then_more_of_hers)
    erased = platform.ok(platform.post("/v1/org/persons/ana/erase"))["erasure"]
    monkeypatch.undo()
    refused = [(r.status_code, r.json()["_tag"], r.json()["message"]) for r in during[:3]]
    assert refused == [(404, "NotFound", "no person ana in your org")] * 2 + [
        (404, "NotFound", f"no session {sid}")]
    promoted = platform.ok(during[3], 201)
    assert erased["counts"]["sessions"] == 2
    left = graph.value("MATCH (s:Session)-[:WITH]->(p:Person {erased: true}) "
                       "WHERE EXISTS { (s)-[:OF_AGENT]->() } RETURN count(s)")
    assert left == 0
    for mark in ("ANA-RACE-1f", "ANA-RACE-2f"):
        assert stored_anywhere(graph, mark) == 0, mark
    assert agent_memory(platform, promoted["agent"]["id"])["entries"] == {}


def test_her_agent_memory_edit_is_refused_while_her_erasure_runs(
    api: Api, platform: Api, graph: Graph, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # SPEC 7, A10: once her erasure has begun she is no person of the org, for her own token
    # too: an agent memory edit of hers is refused as a session of hers is, so no change of
    # hers can land after the erasure read them
    agent = platform.agent(shared=True)["id"]
    api.session(agent)
    agent_remember(platform, agent, "tone", "Keep answers short.")
    before = agent_memory(platform, agent)
    during: list[httpx.Response] = []
    scope = ErasureRepository.scope

    async def then_her_edit(
        self: ErasureRepository, org: str, person: str
    ) -> tuple[list[str], list[str]]:
        found = await scope(self, org, person)
        if not during:  # (the scope is read again after the parts)
            during.append(await asyncio.to_thread(
                agent_command, api, agent, remember("tone", "Answer at length.", "procedure")))
        return found

    monkeypatch.setattr(ErasureRepository, "scope", then_her_edit)
    platform.ok(platform.post("/v1/org/persons/ana/erase"))
    monkeypatch.undo()
    [refused] = during
    assert (refused.status_code, refused.json()["_tag"], refused.json()["message"]) == (
        404, "NotFound", "no person ana in your org")
    assert agent_memory(platform, agent) == before


def test_no_agent_entry_about_the_person_is_made_while_their_erasure_runs(
    api: Api, member: Api, platform: Api, graph: Graph, openai_stub: OpenAIStub,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # SPEC 7, A9: once every agent's part has run, a Remember about her and a learning job's
    # change about her are refused as after the erasure (she is no person of the org), so
    # nothing about her outlives it
    helper_is_stub(platform, consolidation=False)
    learning, learn_started = threading.Event(), threading.Event()
    shared = platform.agent(shared=True)["id"]
    ben = member.session(shared)["session"]["id"]
    openai_stub.script_for(LEARN, answer(
        change("ana-said", "ANA-LATE-1f", ["ben-u1"], "preference", about="ana"),
        gate=learning, started=learn_started,
    ))
    member.turn(ben, user("Ana says she likes green tea", id="ben-u1"))
    wait_event(learn_started, "the learning job asked its model")
    reads: list[object] = []
    during: list[httpx.Response] = []
    scope = ErasureRepository.scope

    async def then_about_her(
        self: ErasureRepository, org: str, person: str
    ) -> tuple[list[str], list[str]]:
        found = await scope(self, org, person)
        reads.append(found)
        if len(reads) == 2:  # every agent's part has run: the scope is read again
            late = remember("ana-late", "ANA-LATE-2f", "preference", about="ana")
            during.append(await asyncio.to_thread(agent_command, platform, shared, late))
            learning.set()
            await asyncio.to_thread(wait_settled, graph)
        return found

    monkeypatch.setattr(ErasureRepository, "scope", then_about_her)
    platform.ok(platform.post("/v1/org/persons/ana/erase"))
    monkeypatch.undo()
    [refused] = during
    assert refused.status_code == 400, refused.text
    assert (refused.json()["_tag"], refused.json()["field"]) == ("ValidationError",
                                                                 "command.about")
    assert refused.json()["message"] == "no person ana in your org"
    for mark in ("ANA-LATE-1f", "ANA-LATE-2f"):
        assert stored_anywhere(graph, mark) == 0, mark
    assert agent_memory(platform, shared)["entries"] == {}
    [job] = learning_jobs(platform, shared)
    assert (job["status"], job["kept"]) == ("succeeded", [])
    [dropped] = job["dropped"]  # its record keeps nothing the model sent of her
    assert (dropped["key"], dropped["proposal"]) == (ERASED_WITHHELD, "")


def wait_settled(graph: Graph, timeout: float = 60) -> None:
    """Wait until no run or learning job is queued or running."""
    deadline = time.monotonic() + timeout
    while graph.value(
        "MATCH (r) WHERE (r:Run OR r:LearningJob) AND r.status IN ['queued', 'running'] "
        "RETURN count(r)"
    ):
        assert time.monotonic() < deadline, "jobs still pending"
        time.sleep(0.05)


@contextmanager
def held(graph: Graph, statement: str, **params: Any) -> Iterator[None]:
    """`statement` run in a transaction of the test's own, which holds the locks it took (as an
    operation of the service does, half way through) until the block ends, then commits."""
    with graph.driver.session(database=graph.database) as session:
        tx = session.begin_transaction()
        tx.run(statement, params).consume()  # run to its end: its locks are held
        yield
        tx.commit()


def wait_blocked(graph: Graph, statement: str, what: str) -> None:
    """Wait until a transaction running `statement` (a part of its text) waits for a lock
    that another holds (Neo4j's own word)."""
    deadline = time.monotonic() + 60
    while not blocked(graph, statement):
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def blocked(graph: Graph, statement: str) -> bool:
    """Whether a transaction running `statement` (a part of its text) waits for a lock."""
    return bool(graph.value("SHOW TRANSACTIONS YIELD status, currentQuery "
                            "WHERE status STARTS WITH 'Blocked' AND currentQuery CONTAINS $text "
                            "RETURN count(*) AS n", text=statement))


def held_run(api: Api, openai_stub: OpenAIStub, content: str) -> tuple[str, threading.Event]:
    """A session whose turn (u-1, "I fly <content>") is consolidated by the scripted model,
    which answers (keeping `content` under `trip`) once the gate it returns is set: the run
    is at its model when this returns."""
    api.patch("/v1/org/settings", {"model": "openai:stub"})
    sid = api.session()["session"]["id"]
    gate, started = threading.Event(), threading.Event()
    openai_stub.script_for(CONSOLIDATE, answer(
        change("trip", content, ["u-1"], kind="fact"), gate=gate, started=started,
    ))
    api.turn(sid, user(f"I fly {content}", id="u-1"))
    wait_event(started, "the run asked its model")
    return sid, gate


def test_a_run_queued_behind_one_at_work_ends_when_its_session_is_deleted(
    api: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # S11, SPEC 7: every run of a deleted session ends, skipped, the one its model works on and
    # the one queued behind it; none is left queued or running for a worker to claim again
    sid, gate = held_run(api, openai_stub, "on Monday.")
    api.turn(sid, user("And back on Friday.", id="u-2"))
    runs = ("MATCH (r:Run)-[:FOR_SESSION]->(:Session {id: $s}) "
            "WITH r ORDER BY r.queuedAt RETURN collect(r.status)")
    assert graph.value(runs, s=sid) == ["running", "queued"]
    assert api.ok(api.http.delete(f"/v1/sessions/{sid}")) == {"deleted": sid}
    gate.set()
    wait_settled(graph)
    assert graph.value(runs, s=sid) == ["skipped", "skipped"]


def test_a_run_and_a_learning_job_in_flight_during_an_erasure_write_nothing_erased(
    api: Api, member: Api, platform: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # SPEC 7: nothing erased is written again by a run that read it before
    helper_is_stub(platform)
    learning, learn_started = threading.Event(), threading.Event()
    running, run_started = threading.Event(), threading.Event()
    # ben tells the shared agent something about ana; its learning is held
    shared = platform.agent(shared=True)["id"]
    ben = member.session(shared)["session"]["id"]
    openai_stub.script_for(CONSOLIDATE, answer())
    openai_stub.script_for(LEARN, answer(
        change("ana-said", "ANA-HELD-1f", ["ben-u1"], "preference", about="ana"),
        gate=learning, started=learn_started,
    ))
    member.turn(ben, user("Ana says she likes green tea", id="ben-u1"))
    wait_event(learn_started, "the learning job asked its model")
    # ana's own session consolidates; held too
    ana = api.session(platform.agent()["id"])["session"]["id"]
    openai_stub.script_for(CONSOLIDATE, answer(
        change("trip", "ANA-HELD-2f", ["ana-u1"], kind="fact"),
        gate=running, started=run_started,
    ))
    api.turn(ana, user("My trip ANA-HELD-2f", id="ana-u1"))
    wait_event(run_started, "the run asked its model")

    platform.ok(platform.post("/v1/org/persons/ana/erase"))
    assert stored_anywhere(graph, "ANA-HELD-2f") == 0
    learning.set()
    running.set()
    wait_settled(graph)

    for mark in ("ANA-HELD-1f", "ANA-HELD-2f"):
        assert stored_anywhere(graph, mark) == 0, (mark, graph.rows(
            "MATCH (x) WHERE any(k IN keys(x) WHERE x[k] IS :: STRING AND x[k] CONTAINS $m) "
            "RETURN labels(x) AS l, properties(x) AS p", m=mark))
    assert "ana-said" not in agent_memory(platform, shared)["entries"]
    [job] = [j for j in learning_jobs(platform, shared) if j["sessions"] == [ben]]
    assert job["kept"] == []
    # dropped (A5: not her own session), and its record keeps nothing the model sent of her
    [dropped] = job["dropped"]
    assert (dropped["key"], dropped["proposal"]) == (ERASED_WITHHELD, "")


def test_deleting_a_session_erases_it_and_its_forks_keep_their_own_memory(
    api: Api, member: Api, platform: Api, graph: Graph
) -> None:
    sid = api.session()["session"]["id"]
    api.turn(sid, user("ANA-DEL-0f", id="u-1"))
    api.remember(sid, "ANA-DEL-KEY-1k", "ANA-DEL-1f")
    fork = api.ok(api.post(f"/v1/sessions/{sid}/fork", {}), 201)["session"]["id"]
    api.remember(fork, "fork-note", "ANA-DEL-2f")
    kept = api.view(fork)

    # another member's session is not theirs to delete (404, as every other path answers)
    assert member.http.delete(f"/v1/sessions/{sid}").status_code == 404
    deleted = api.http.delete(f"/v1/sessions/{sid}")
    assert deleted.status_code == 200, deleted.text
    assert deleted.json() == {"deleted": sid}

    assert api.get(f"/v1/sessions/{sid}").status_code == 404
    assert platform.get(f"/v1/sessions/{sid}").status_code == 404
    assert api.http.delete(f"/v1/sessions/{sid}").status_code == 404
    listed = api.ok(api.get("/v1/sessions"))["sessions"]
    assert [view["session"]["id"] for view in listed] == [fork]
    # its items and memory are tombstones; the fork's own memory (its copies too) stays, and
    # its timeline's items from the deleted session end at tombstones
    assert stored_anywhere(graph, "ANA-DEL-0f") == 0
    assert api.view(fork)["memory"] == kept["memory"]
    assert stored_anywhere(graph, "ANA-DEL-2f") > 0
    # the deleted session's entry and its change take an opaque key; the fork's copy keeps it
    [erased] = graph.rows(
        "MATCH (:Session {id: $s})-[:HAS_ENTRY]->(e:Entry)<-[:OF_ENTRY]-(c:Change) "
        "RETURN e.key AS entry, collect(c.key) AS changes", s=sid,
    )
    assert erased["entry"].startswith("erased-")
    assert erased["changes"] == [erased["entry"]]
    assert "ANA-DEL-KEY-1k" in api.view(fork)["memory"]["entries"]
    assert graph.value(
        "MATCH (:Session {id: $fork})-[:HEAD]->(:Version)-[:PARENT*]->(:Version)-[:ADDS]->"
        "(i:Item {id: 'u-1'}) RETURN i.erased", fork=fork,
    ) is True


def reverted_fork(api: Api, key: str, content: str) -> tuple[str, str]:
    """A session with one entry (`key`), and a fork of it that made an entry of its own and was
    reverted to the version it was forked at, so that it holds its source's memory: the session
    and the fork."""
    sid = api.session()["session"]["id"]
    api.remember(sid, key, content)
    forked = api.ok(api.post(f"/v1/sessions/{sid}/fork", {}), 201)["session"]
    fork = forked["id"]
    api.remember(fork, "fork-note", "Fork note.")
    current = api.view(fork)["session"]
    api.ok(api.post(f"/v1/sessions/{fork}/revert", {
        "expected": current["head"], "revision": current["revision"], "to": forked["forkedAt"],
    }))
    return sid, fork


def test_deleting_a_session_leaves_none_of_its_memory_in_a_fork_reverted_to_it(
    api: Api,
) -> None:
    # SPEC section 7: a fork reverted to the version it was forked at holds its source's
    # memory; deleting the source takes that memory out of the fork too, on every read
    sid, fork = reverted_fork(api, "ANA-REV-KEY-3k", "ANA-REV-3f")
    assert "ANA-REV-KEY-3k" in api.view(fork)["memory"]["entries"]
    before = api.view(fork)["session"]["revision"]

    assert api.http.delete(f"/v1/sessions/{sid}").status_code == 200

    after = api.view(fork)
    assert after["memory"]["entries"] == {}
    assert after["session"]["revision"] > before
    shown = api.ok(api.get(f"/v1/sessions/{fork}/instructions"))
    assert "ANA-REV-3f" not in shown["memory"]
    assert shown["included"]["session"] == []


def test_a_run_shown_an_entry_a_deletion_takes_out_of_its_fork_keeps_nothing(
    api: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # SPEC section 7: a run of a fork reverted to its source's memory is shown the source's
    # entry; the source is deleted while the model works. What the model answers may carry the
    # entry (here: copied under a new key), so the run applies and keeps none of it. (The
    # fork's own copy of the entry, in its history, is the fork's: it stays.)
    api.patch("/v1/org/settings", {"model": "openai:stub"})
    sid, fork = reverted_fork(api, "ANA-SHOWN-KEY-5k", "ANA-SHOWN-5f")
    gate, asked = threading.Event(), threading.Event()
    openai_stub.script_for(CONSOLIDATE, answer(
        change("copy", "COPIED-6f ANA-SHOWN-5f", ["f-1"], kind="fact"), gate=gate,
        started=asked,
    ))
    try:
        api.turn(fork, user("What do we know?", id="f-1"))
        wait_event(asked, "the fork's run asked its model")
        assert "ANA-SHOWN-5f" in json.dumps(openai_stub.requests_for(CONSOLIDATE)[-1])
        assert api.http.delete(f"/v1/sessions/{sid}").status_code == 200
    finally:
        gate.set()
    [run] = api.wait_idle(fork)
    assert (run["status"], run["kept"]) == ("succeeded", [])
    assert [(d["key"], d["reason"]) for d in run["dropped"]] == [(ERASED_WITHHELD, ERASED_SINCE)]
    assert api.view(fork)["memory"]["entries"] == {}
    assert stored_anywhere(graph, "COPIED-6f") == 0


def test_a_forks_starting_point_is_read_reverted_to_and_forked_after_its_source_is_deleted(
    api: Api,
) -> None:
    # SPEC section 7, S13, S14: the version a fork started at is in the fork's history; once
    # the source is deleted it holds what the tombstones leave (no entry), on every path
    sid = api.session()["session"]["id"]
    api.remember(sid, "ANA-START-KEY-7k", "ANA-START-7f")
    forked = api.ok(api.post(f"/v1/sessions/{sid}/fork", {}), 201)["session"]
    fork, start = forked["id"], forked["forkedAt"]
    api.remember(fork, "fork-note", "Fork note.")
    assert api.http.delete(f"/v1/sessions/{sid}").status_code == 200

    version = api.ok(api.get(f"/v1/sessions/{fork}/versions/{start}"))
    assert (version["version"]["id"], version["memory"]["entries"]) == (start, {})
    again = api.ok(api.post(f"/v1/sessions/{fork}/fork", {"at": start}), 201)
    assert again["memory"]["entries"] == {}
    current = api.view(fork)["session"]
    reverted = api.ok(api.post(f"/v1/sessions/{fork}/revert", {
        "expected": current["head"], "revision": current["revision"], "to": start,
    }))
    assert reverted["memory"]["entries"] == {}
    assert api.view(fork)["memory"]["entries"] == {}


def test_a_forks_starting_point_keeps_its_timeline_of_tombstones_after_its_source_is_deleted(
    api: Api,
) -> None:
    # SPEC section 7, S13: the version a fork started at answers the items it held, their
    # content erased, as the fork's own timeline does, once the source is deleted
    sid = api.session()["session"]["id"]
    api.turn(sid, user("ANA-TURN-8f", id="m-1"), user("ANA-TURN-9f", id="m-2"))
    api.wait_idle(sid)
    forked = api.ok(api.post(f"/v1/sessions/{sid}/fork", {}), 201)["session"]
    fork, start = forked["id"], forked["forkedAt"]
    assert api.http.delete(f"/v1/sessions/{sid}").status_code == 200

    version = api.ok(api.get(f"/v1/sessions/{fork}/versions/{start}"))
    head = api.ok(api.get(f"/v1/sessions/{fork}/versions/{api.view(fork)['session']['head']}"))
    assert [(i["id"], i["content"]) for i in version["items"]] == [
        ("m-1", None), ("m-2", None)]
    assert version["items"] == head["items"]


CHANGES_PAGE = """query($id: ID!, $first: Int!, $after: String) { session(id: $id) {
  memory { entry(key: "plan") { changes(first: $first, after: $after) {
    nodes { id } pageInfo { hasNextPage endCursor } } } } } }"""


def test_a_forks_entry_pages_through_its_story_whose_source_is_deleted(api: Api) -> None:
    # SPEC section 7, S3: a fork's entry's story runs on through its deleted source's
    # tombstones, and paging through it answers every change, whatever the page size
    sid = api.session()["session"]["id"]
    api.remember(sid, "plan", "ANA-PAGE-1f")
    api.remember(sid, "plan", "ANA-PAGE-2f")
    fork = api.ok(api.post(f"/v1/sessions/{sid}/fork", {}), 201)["session"]["id"]
    api.remember(fork, "plan", "Fork plan.")
    assert api.http.delete(f"/v1/sessions/{sid}").status_code == 200

    def page(first: int, after: str | None) -> Any:
        answer = flat(api.graphql(CHANGES_PAGE, id=fork, first=first, after=after))
        assert "errors" not in answer, answer
        return answer["data"]["session"]["memory"]["entry"]["changes"]

    whole = [change["id"] for change in page(50, None)["nodes"]]
    assert len(whole) == 4  # the fork's edit, its copy, and the source's two
    for first in (1, 2, 3):
        seen, after = [], None
        while True:
            found = page(first, after)
            seen += [change["id"] for change in found["nodes"]]
            if not found["pageInfo"]["hasNextPage"]:
                break
            after = found["pageInfo"]["endCursor"]
        assert seen == whole, first


def test_what_an_erasure_names_is_no_name_a_client_may_use(
    api: Api, member: Api, platform: Api, graph: Graph, neo4j_target: Target
) -> None:
    # SPEC section 7: an erasure names what it erased `erased-` and a random id (a person's id,
    # an entry's key). No key, `about` or person name a client writes may be one, so no write
    # reaches a tombstone; and what an erasure left of a person is no person of the org.
    agent = platform.agent(shared=True)["id"]
    api.session(agent)
    ben = member.session(agent)["session"]["id"]
    platform.ok(platform.post("/v1/org/persons/ana/erase"))
    opaque = graph.value("MATCH (p:Person {erased: true}) RETURN p.id")
    assert opaque.startswith("erased-")
    before = (member.view(ben), agent_memory(platform, agent))

    fact = {"_tag": "Remember", "key": f"erased-{uuid.uuid4()}", "content": "A note.",
            "kind": "fact"}
    assert_error(member.command(ben, fact), 400, "ValidationError", "command.key")
    assert_error(post_agent(platform, agent, 0, {**fact, "kind": "procedure"}), 400,
                 "ValidationError", "command.key")
    about = {"_tag": "Remember", "key": "tea", "content": "Likes green tea.",
             "kind": "preference", "about": opaque}
    assert_error(post_agent(platform, agent, 0, about), 400, "ValidationError", "command.about")
    assert (member.view(ben), agent_memory(platform, agent)) == before
    member.remember(ben, "erased-notes", "A key that only starts so is a key.")
    assert_error(platform.post("/v1/sessions", {"agent": agent, "person": opaque}), 404,
                 "NotFound")
    assert_error(platform.post(f"/v1/org/persons/{opaque}/erase"), 404, "NotFound")
    env = {"NEO4J_URI": neo4j_target.uri, "NEO4J_PASSWORD": neo4j_target.password}
    made = run_cli("token", "create", "--org", "acme", "--person", opaque, env=env)
    assert made.returncode != 0
    assert "erased-" in made.stderr
    assert graph.value("MATCH (t:Token)-[:GRANTS]->(:Person {id: $p}) "
                       "WHERE t.revokedAt IS NULL RETURN count(t)", p=opaque) == 0


def test_org_delete_removes_every_node_of_the_org_and_no_other(
    api: Api, other_org: Api, platform: Api, graph: Graph, neo4j_target: Target
) -> None:
    theirs = other_org.session()["session"]["id"]
    other_org.remember(theirs, "note", "GLOBEX-1f")
    # what stays: everything but acme's org, members and tokens, made before this test's body
    stays = set(graph.value("MATCH (n) RETURN collect(elementId(n))")) - set(graph.value(
        "MATCH (o:Org {id: 'acme'})<-[:MEMBER_OF|SERVES]-(p)<-[:GRANTS]-(t:Token) "
        "WITH o, collect(elementId(p)) + collect(elementId(t)) AS ids "
        "RETURN [elementId(o)] + ids"
    ))
    relationships = graph.value(
        "MATCH (a)-[r]->(b) WHERE elementId(a) IN $s AND elementId(b) IN $s RETURN count(r)",
        s=list(stays),
    )
    # acme: sessions, a fork, agent memory, an erasure
    sid = api.session(platform.agent(shared=True)["id"])["session"]["id"]
    api.turn(sid, user("ACME-1f"))
    api.remember(sid, "note", "ACME-2f")
    api.ok(api.post(f"/v1/sessions/{sid}/fork", {}), 201)
    env = {"NEO4J_URI": neo4j_target.uri, "NEO4J_PASSWORD": neo4j_target.password}
    erased = run_cli("erase", "--org", "acme", "--person", "ben", env=env)
    assert erased.returncode != 0  # acme has no ben
    assert "no person ben" in erased.stderr
    wait_settled(graph)

    refused = subprocess.run(  # asked to confirm, the operator types another name
        [*CLI, "org", "delete", "--org", "acme"], input="not acme\n", capture_output=True,
        text=True, cwd=ROOT, env={**os.environ, **env}, timeout=60, check=False,
    )
    assert refused.returncode == 1
    assert stored_anywhere(graph, "ACME-2f") > 0
    # erased on the command line first: the org's tombstones and its Erasure go too
    erased = run_cli("erase", "--org", "acme", "--person", "ana", env=env)
    assert erased.returncode == 0, erased.stderr
    assert erased.stdout.startswith("erased ana of acme (era-")
    assert stored_anywhere(graph, "ACME-2f") == 0
    assert graph.value("MATCH (e:Erasure {org: 'acme'}) RETURN count(e)") == 1

    done = run_cli("org", "delete", "--org", "acme", "--yes", env=env)
    assert done.returncode == 0, done.stderr
    assert set(graph.value("MATCH (n) RETURN collect(elementId(n))")) == stays
    assert graph.value("MATCH ()-[r]->() RETURN count(r)") == relationships
    assert stored_anywhere(graph, "ACME-1f") == 0
    assert graph.value("MATCH (o:Org {id: 'acme'}) RETURN count(o)") == 0
    assert other_org.view(theirs)["memory"]["entries"]["note"]["content"] == "GLOBEX-1f"
    again = run_cli("org", "delete", "--org", "acme", "--yes", env=env)
    assert again.returncode == 1
    assert "no org acme" in again.stderr



def test_an_erasure_on_the_command_line_shows_its_progress_on_a_terminal(
    api: Api, platform: Api, graph: Graph, neo4j_target: Target
) -> None:
    # on a terminal, `erase` draws a progress bar of its parts (stderr), then says what it
    # erased (stdout)
    sid = api.session(platform.agent(shared=True)["id"])["session"]["id"]
    api.turn(sid, user("ACME-1f"))
    wait_settled(graph)
    env = {"NEO4J_URI": neo4j_target.uri, "NEO4J_PASSWORD": neo4j_target.password}
    terminal, stderr = os.openpty()
    shown: list[bytes] = []

    def read_terminal() -> None:
        while True:
            try:
                chunk = os.read(terminal, 4096)
            except OSError:  # the command ended and closed its end
                return
            if not chunk:
                return
            shown.append(chunk)

    reader = threading.Thread(target=read_terminal)
    reader.start()
    try:
        erased = subprocess.run(
            [*CLI, "erase", "--org", "acme", "--person", "ana"], stdout=subprocess.PIPE,
            stderr=stderr, text=True, cwd=ROOT, env={**os.environ, **env, "COLUMNS": "100"},
            timeout=60, check=False,
        )
    finally:
        os.close(stderr)
        reader.join(timeout=10)
        os.close(terminal)
    assert erased.returncode == 0
    assert erased.stdout.startswith("erased ana of acme (era-")
    drawn = b"".join(shown).decode(errors="replace")
    assert "erase ana of acme" in drawn, drawn
    assert stored_anywhere(graph, "ACME-1f") == 0


def test_retention_erases_the_content_of_old_items_and_keeps_their_entries(
    api: Api, graph: Graph, start_server: Callable[..., RunningServer]
) -> None:
    sid = api.session()["session"]["id"]
    api.turn(sid, user("OLD-1f", id="u-1"), user("NEW-2f", id="u-2"))
    api.remember(sid, "note", "KEPT-3f")
    api.wait_idle(sid)
    # the first item is two days old; nothing else is
    graph.rows("MATCH (i:Item {id: 'u-1', session: $s}) SET i.at = i.at - 2 * 86400000", s=sid)
    memory = api.view(sid)["memory"]

    retaining = start_server(item_retention_days=1, retention_poll_seconds=0.1)
    deadline = time.monotonic() + 60
    while stored_anywhere(graph, "OLD-1f"):  # the job's first pass runs at its start
        assert time.monotonic() < deadline, "retention erased nothing"
        time.sleep(0.05)

    assert graph.value(
        "MATCH (i:Item {id: 'u-1', session: $s}) RETURN i.erased AND i.content IS NULL", s=sid
    ) is True
    assert stored_anywhere(graph, "NEW-2f") > 0
    assert api.view(sid)["memory"] == memory  # the entries and their sources stay
    metrics = httpx.get(f"{retaining.url}/metrics").text
    assert "openbot_memory_retention_erased_items_total 1.0" in metrics
    assert "openbot_memory_retention_cutoff_milliseconds" in metrics


def test_retention_moves_the_revision_of_a_fork_whose_entries_cite_what_it_empties(
    api: Api, graph: Graph, start_server: Callable[..., RunningServer]
) -> None:
    # SPEC 7, S12: a fork's entry cites its source's item; retention empties that item, which
    # changes the fork's view, so the fork's revision grows (no kept view of it is answered)
    sid = api.session()["session"]["id"]
    api.remember(sid, "trip", "FORK-OLD-1f")
    fork = api.ok(api.post(f"/v1/sessions/{sid}/fork", {}), 201)["session"]["id"]
    before = api.view(fork)["session"]["revision"]
    graph.rows("MATCH (i:Item {session: $s}) SET i.at = i.at - 2 * 86400000", s=sid)

    start_server(item_retention_days=1, retention_poll_seconds=0.1)
    deadline = time.monotonic() + 60
    emptied = "MATCH (i:Item {session: $s}) RETURN all(i IN collect(i) WHERE i.expired)"
    while not graph.value(emptied, s=sid):  # the job's first pass runs at its start
        assert time.monotonic() < deadline, "retention erased nothing"
        time.sleep(0.05)

    assert api.view(fork)["session"]["revision"] == before + 1


def test_a_run_whose_items_retention_erased_while_its_model_worked_applies_nothing(
    api: Api, graph: Graph, openai_stub: OpenAIStub,
    start_server: Callable[..., RunningServer],
) -> None:
    # SPEC 7: applying re-checks what the run read
    sid, gate = held_run(api, openai_stub, "OLD-HELD-1f")
    emptied_by_retention(graph, start_server, sid, "u-1", said="OLD-HELD-1f")
    gate.set()

    [run] = api.wait_idle(sid)
    assert run["status"] == "succeeded"
    assert run["kept"] == []
    assert [(d["reason"], d["proposal"]) for d in run["dropped"]] == [(ERASED_SINCE, "")]
    assert api.view(sid)["memory"]["entries"] == {}
    assert stored_anywhere(graph, "OLD-HELD-1f") == 0


def test_a_run_whose_items_an_erasure_holds_while_it_applies_waits_and_keeps_nothing(
    api: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # SPEC 7: an erasure's part that holds the items a run read, not yet committed, as the run
    # applies: the run waits for it, sees the items erased and keeps nothing (the run's session
    # lock alone does not hold it off: an erasure empties an item its person wrote in another's
    # session under the item's own lock, and a fork reads its source's items)
    sid, gate = held_run(api, openai_stub, "HELD-ITEMS-1f")
    with held(graph, "MATCH (i:Item {id: 'u-1', session: $s}) "
              "SET i.content = null, i.erased = true", s=sid):
        gate.set()
        wait_blocked(graph, "AS readUid", "the run applied without waiting for its items")
    [run] = api.wait_idle(sid)
    assert (run["status"], run["kept"]) == ("succeeded", [])
    assert [d["reason"] for d in run["dropped"]] == [ERASED_SINCE]
    assert api.view(sid)["memory"]["entries"] == {}
    assert stored_anywhere(graph, "HELD-ITEMS-1f") == 0


def test_a_run_error_answered_while_an_erasure_holds_its_items_is_not_kept(
    api: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # SPEC 7: a run that ends failed while an erasure's part holds the items its model read
    # (not yet committed) waits for it, and then keeps no error: the error may quote them
    api.patch("/v1/org/settings", {"model": "openai:stub"})
    sid = api.session()["session"]["id"]
    gate, started = threading.Event(), threading.Event()
    openai_stub.script_for(CONSOLIDATE, Reply(content="refused: RUN-RACE-1f", status=400,
                                              gate=gate, started=started))
    api.turn(sid, user("My trip RUN-RACE-1f", id="u-1"))
    wait_event(started, "the run asked its model")
    with held(graph, "MATCH (i:Item {id: 'u-1', session: $s}) "
              "SET i.content = null, i.erased = true", s=sid):
        gate.set()
        wait_blocked(graph, "MERGE (r)-[:TRIED]->(i)", "the run's end never waited for the items")
    wait_settled(graph)
    assert graph.rows("MATCH (r:Run)-[:FOR_SESSION]->(:Session {id: $s}) "
                      "RETURN r.status AS status, r.error AS error", s=sid) == [
        {"status": "failed", "error": None}
    ]


def test_a_forks_runs_that_read_a_deleted_sessions_items_keep_no_error_or_proposal_of_them(
    api: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # SPEC 7: a fork's runs read its source's unprocessed items; once the source is deleted,
    # a finished run's error and the changes it dropped, which may quote them, are withheld
    api.patch("/v1/org/settings", {"model": "openai:stub"})
    source = api.session()["session"]["id"]
    api.ok(api.command(source, {"_tag": "Configure", "generate": False}))
    api.turn(source, user("My trip SRC-ITEM-1f", id="u-1"))  # left unprocessed
    forks = [api.ok(api.post(f"/v1/sessions/{source}/fork", {}), 201)["session"]["id"]
             for _ in range(2)]
    openai_stub.script_for(CONSOLIDATE, answer(
        change("trip", "Quoted: SRC-ITEM-1f", [], kind="fact")),  # cites nothing: dropped
        Reply(content="refused: SRC-ITEM-1f", status=400))
    for fork in forks:
        api.ok(api.command(fork, {"_tag": "Configure", "generate": True}))
        api.turn(fork, user("Go on.", id="f-1"))
        api.wait_idle(fork)
    dropped, failed = (api.ok(api.get(f"/v1/sessions/{fork}/runs"))["runs"][0] for fork in forks)
    assert "SRC-ITEM-1f" in dropped["dropped"][0]["proposal"]
    assert "SRC-ITEM-1f" in failed["error"]

    assert api.http.delete(f"/v1/sessions/{source}").status_code == 200
    dropped, failed = (api.ok(api.get(f"/v1/sessions/{fork}/runs"))["runs"][0] for fork in forks)
    assert [(d["key"], d["reason"], d["proposal"]) for d in dropped["dropped"]] == [
        (ERASED_WITHHELD, ERASED_WITHHELD, None)]
    assert (failed["status"], failed["error"]) == ("failed", None)
    assert stored_anywhere(graph, "SRC-ITEM-1f") == 0


def test_her_private_agent_entry_erased_by_deleting_her_session_leaves_with_her_erasure(
    api: Api, platform: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # SPEC 7: deleting her session erases the private entry learned from it alone, but the
    # tombstone still holds her id (its owner and subject, and the name the turns shown it
    # list it by); her erasure later takes her id out of it too, as out of everything else
    helper_is_stub(platform)
    agent = platform.agent(shared=True)["id"]
    sid = api.session(agent)["session"]["id"]
    openai_stub.script_for(CONSOLIDATE, answer())
    openai_stub.script_for(LEARN, answer(
        change("diet", "Ana eats no meat.", ["ana-u1"], "preference", about="ana",
               visibility="private")))
    api.turn(sid, user("I eat no meat.", id="ana-u1"))
    wait_learned(api, agent, [sid])
    assert "diet@ana" in agent_memory(api, agent)["entries"]
    later = api.session(agent)["session"]["id"]
    openai_stub.script_for(LEARN, answer())
    api.turn(later, user("Hello again.", id="ana-u2"))  # shown the private entry
    wait_learned(api, agent, [later], jobs=2)
    assert api.http.delete(f"/v1/sessions/{sid}").status_code == 200

    platform.ok(platform.post("/v1/org/persons/ana/erase"))
    held = graph.rows(
        "MATCH (x) WHERE (x:AgentEntry OR x:AgentChange OR x:Turn) "
        "AND any(k IN keys(x) WHERE x[k] = 'ana' OR (x[k] IS :: LIST<STRING> "
        "AND any(v IN x[k] WHERE v ENDS WITH '@ana'))) "
        "RETURN labels(x)[0] AS kind, properties(x) AS holds")
    assert held == []
    log = platform.ok(platform.get(f"/v1/agents/{agent}/memory/log"))["changes"]
    assert "@ana" not in json.dumps(log)


def test_retention_takes_what_a_run_said_of_the_items_it_empties(
    api: Api, graph: Graph, openai_stub: OpenAIStub, start_server: Callable[..., RunningServer],
) -> None:
    # SPEC 7: a run's error may quote the items its model read; retention, emptying them, takes
    # the error too (the run stays, failed), as a deletion does
    api.patch("/v1/org/settings", {"model": "openai:stub"})
    sid = api.session()["session"]["id"]
    openai_stub.script_for(CONSOLIDATE, Reply(content="refused: OLD-SAID-1f", status=400))
    api.turn(sid, user("I fly OLD-SAID-1f", id="u-1"))
    [run] = api.wait_idle(sid)
    assert "OLD-SAID-1f" in run["error"]
    emptied_by_retention(graph, start_server, sid, "u-1", said="OLD-SAID-1f")
    [run] = api.ok(api.get(f"/v1/sessions/{sid}/runs"))["runs"]
    assert (run["status"], run["error"]) == ("failed", None)


def taught(
    api: Api, platform: Api, openai_stub: OpenAIStub, mark: str, learned: str | None = None
) -> tuple[str, str, list[str], list[str]]:
    """A shared agent the scripted helper learned one entry from ana's session's turn (`teach`):
    the agent, the session, the marks (ANA-`mark`-nf) and the keys (the session entry's, then
    the learned entry's, `learned` if given)."""
    helper_is_stub(platform)
    agent = platform.agent(shared=True)["id"]
    sid = api.session(agent)["session"]["id"]
    marks = [f"ANA-{mark}-{n}f" for n in (1, 2, 3)]
    keys = [f"ANA-{mark}-1k", learned or f"ANA-{mark}-2k"]
    teach(api, openai_stub, agent, sid, marks, keys, "ana")
    return agent, sid, marks, keys


def test_an_agent_entry_learned_from_her_and_forgotten_since_leaves_with_her_erasure(
    api: Api, platform: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # SPEC 7: an entry supported only by her items is erased, retracted or not: a Forget
    # keeps the content it retracts, and cites nothing of its own
    agent, _, marks, keys = taught(api, platform, openai_stub, "GONE")
    assert agent_forget(platform, agent, keys[1])["entries"][keys[1]]["status"] == "retracted"

    platform.ok(platform.post("/v1/org/persons/ana/erase"))

    assert keys[1] not in agent_memory(platform, agent)["entries"]
    for mark in marks + keys:
        assert stored_anywhere(graph, mark) == 0, mark


def promoted(api: Api, key: str, content: str) -> tuple[str, str, str]:
    """An agent promoted from ana's subagent session with one entry: the session, the agent,
    and the item its entry cites."""
    _, sid = subagent(api)
    api.remember(sid, key, content, "preference")
    agent = str(api.ok(api.post(f"/v1/sessions/{sid}/promote", {"name": "helper"}), 201)
                ["agent"]["id"])
    [source] = agent_memory(api, agent)["entries"][key]["sources"]
    return sid, agent, str(source["item"])


def emptied_by_retention(
    graph: Graph, start_server: Callable[..., RunningServer], sid: str, item: str,
    said: str | None = None,
) -> None:
    """Make `item` of session `sid` two days old, and wait until a server's retention of a
    day has emptied it, and (with `said`, a text the item holds) until that text is stored
    nowhere."""
    graph.rows("MATCH (i:Item {id: $item, session: $s}) SET i.at = i.at - 2 * 86400000",
               item=item, s=sid)
    start_server(item_retention_days=1, retention_poll_seconds=0.1)
    erased = "MATCH (i:Item {id: $item, session: $s}) RETURN coalesce(i.erased, false)"
    deadline = time.monotonic() + 60
    while not graph.value(erased, item=item, s=sid) or (
        said is not None and stored_anywhere(graph, said)
    ):
        assert time.monotonic() < deadline, f"retention left {said or item}"
        time.sleep(0.05)


def test_a_run_that_reads_an_item_retention_emptied_before_keeps_what_the_rest_supports(
    api: Api, graph: Graph, openai_stub: OpenAIStub,
    start_server: Callable[..., RunningServer],
) -> None:
    # S7, SPEC section 7: retention emptied an item before any run read it (the session's
    # `generate` was off). The run reads the tombstone and a new item; nothing it read was
    # erased since, so what its model proposes from the new item is kept.
    api.patch("/v1/org/settings", {"model": "openai:stub"})
    sid = api.session()["session"]["id"]
    api.ok(api.command(sid, {"_tag": "Configure", "generate": False}))
    api.turn(sid, user("OLD-8f", id="u-1"))
    emptied_by_retention(graph, start_server, sid, "u-1")
    openai_stub.script_for(CONSOLIDATE, answer(
        change("plan", "We fly on Friday.", ["u-2"], kind="fact")))
    api.ok(api.command(sid, {"_tag": "Configure", "generate": True}))
    api.turn(sid, user("We fly on Friday.", id="u-2"))
    [run, *_] = api.wait_idle(sid)
    assert (run["status"], run["read"], run["dropped"]) == ("succeeded", ["u-1", "u-2"], [])
    memory = api.view(sid)["memory"]
    assert memory["entries"]["plan"]["content"] == "We fly on Friday."
    assert memory["processed"] == ["u-1", "u-2"]


@pytest.mark.parametrize("lock", ["session", "item"])
def test_an_item_an_erasure_empties_while_retention_waits_stays_the_erasures(
    api: Api, graph: Graph, start_server: Callable[..., RunningServer], lock: str
) -> None:
    # SPEC 7: retention locks each old item (under its session's lock) and reads it again. An
    # item that an erasure emptied meanwhile, under the session's lock (erase_session) or
    # the item's own (finish_erasure: what she wrote in another's session), stays as the
    # erasure left it, never marked `expired` (which would keep the agent entries resting on
    # it from leaving with her)
    sid = api.session()["session"]["id"]
    api.turn(sid, user("I fly OLD-RACE-1f", id="u-1"))
    wait_settled(graph)
    item = "MATCH (i:Item {id: 'u-1', session: $s}) "
    graph.rows(item + "SET i.at = i.at - 2 * 86400000", s=sid)
    revision = "MATCH (s:Session {id: $s}) RETURN s.revision"
    before = graph.value(revision, s=sid)
    locked = ("MATCH (s:Session {id: $s}) SET s._lock = true REMOVE s._lock WITH s "
              if lock == "session" else "")
    # an erasure's part, not yet committed
    with held(graph, locked + item + "SET i.content = null, i.erased = true", s=sid):
        start_server(item_retention_days=1, retention_poll_seconds=0.1)
        wait_blocked(graph, "i.expired = true", "retention never waited for the lock")
    deadline = time.monotonic() + 60
    while graph.value(revision, s=sid) == before:  # retention's statement went on, and ended
        assert time.monotonic() < deadline, "retention never took the lock"
        time.sleep(0.05)
    assert graph.rows(item + "RETURN i.erased AS erased, i.expired AS expired", s=sid) == [
        {"erased": True, "expired": None}
    ]


def test_deleting_a_session_leaves_the_entries_whose_items_retention_emptied(
    api: Api, graph: Graph, start_server: Callable[..., RunningServer]
) -> None:
    # SPEC 7: a deletion erases the memory derived from the deleted session's items; an entry
    # whose items retention emptied rests on no erased person's data, and stays
    sid, agent, item = promoted(api, "seat", "Ana prefers window seats.")
    emptied_by_retention(graph, start_server, sid, item)
    kept = agent_memory(api, agent)["entries"]["seat"]
    assert kept["content"] == "Ana prefers window seats."

    other = api.session(agent)["session"]["id"]
    api.turn(other, user("Book the flight.", id="o-1"))
    api.wait_idle(other)
    assert api.ok(api.http.delete(f"/v1/sessions/{other}")) == {"deleted": other}

    assert agent_memory(api, agent)["entries"]["seat"] == kept


def test_an_entry_resting_on_her_items_retention_emptied_leaves_with_her_erasure(
    api: Api, platform: Api, graph: Graph, start_server: Callable[..., RunningServer]
) -> None:
    # SPEC 7: her items are hers whether or not retention emptied them: an agent entry they
    # alone support is erased with her, and her id leaves them
    sid, agent, item = promoted(api, "ANA-OLD-1k", "ANA-OLD-1f")
    emptied_by_retention(graph, start_server, sid, item)
    assert "ANA-OLD-1k" in agent_memory(platform, agent)["entries"]

    platform.ok(platform.post("/v1/org/persons/ana/erase"))

    assert "ANA-OLD-1k" not in agent_memory(platform, agent)["entries"]
    for mark in ("ANA-OLD-1k", "ANA-OLD-1f"):
        assert stored_anywhere(graph, mark) == 0, mark
    assert holding_value(graph, "ana") == 0


@pytest.mark.parametrize("held", ["run", "learning"])
def test_a_model_error_answered_after_her_erasure_is_not_kept(
    api: Api, platform: Api, graph: Graph, openai_stub: OpenAIStub, held: str
) -> None:
    # SPEC 7: what jobs kept of her goes, and nothing erased is written again by a job that
    # read it before: a provider's error may quote what it was sent
    helper_is_stub(platform)
    gate, started = threading.Event(), threading.Event()
    failing = Reply(content="refused: ANA-ERR-1f", status=400, gate=gate, started=started)
    openai_stub.script_for(CONSOLIDATE, failing if held == "run" else answer())
    openai_stub.script_for(LEARN, failing if held == "learning" else answer())
    agent = platform.agent(shared=True)["id"]
    sid = api.session(agent)["session"]["id"]
    api.turn(sid, user("My trip ANA-ERR-1f", id="ana-u1"))
    wait_event(started, f"the {held} asked its model")

    platform.ok(platform.post("/v1/org/persons/ana/erase"))
    gate.set()
    wait_settled(graph)

    label = "Run" if held == "run" else "LearningJob"
    assert graph.value(f"MATCH (j:{label} {{status: 'failed'}}) RETURN count(j)") == 1
    assert stored_anywhere(graph, "ANA-ERR-1f") == 0


def test_a_learning_error_answered_while_her_erasure_goes_through_its_items_is_not_kept(
    api: Api, platform: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # SPEC 7: a learning job that ends failed while an erasure holds the items its model read
    # (not yet committed) waits for it, and then keeps no error: the error may quote them
    helper_is_stub(platform)
    gate, started = threading.Event(), threading.Event()
    openai_stub.script_for(CONSOLIDATE, answer())
    openai_stub.script_for(LEARN, Reply(content="refused: ANA-RACE-1f", status=400, gate=gate,
                                        started=started))
    agent = platform.agent(shared=True)["id"]
    sid = api.session(agent)["session"]["id"]
    api.turn(sid, user("My trip ANA-RACE-1f", id="ana-u1"))
    wait_event(started, "the learning job asked its model")
    # an erasure's part, under the session's lock, not yet committed
    with held(graph, "MATCH (s:Session {id: $s}) SET s._lock = true REMOVE s._lock WITH s "
              "MATCH (i:Item {id: 'ana-u1', session: $s}) "
              "SET i.content = null, i.erased = true", s=sid):
        gate.set()
        wait_blocked(graph, "MERGE (j)-[:TRIED]->(i)", "the job's end never waited for the items")
    wait_settled(graph)
    assert graph.rows("MATCH (j:LearningJob) RETURN j.status AS status, j.error AS error") == [
        {"status": "failed", "error": None}
    ]


def ben_tells_of_ana(
    member: Api, platform: Api, openai_stub: OpenAIStub, mark: str, *more: dict[str, Any]
) -> tuple[str, str]:
    """A shared agent, and ben's session of it, whose turn (ben-u1) tells of ana: the
    scripted helper proposes a preference about her (`mark`), which learning drops (A5: not
    her own session), and `more`. The agent and the session; the job may still run."""
    helper_is_stub(platform)
    shared = platform.agent(shared=True)["id"]
    ben = member.session(shared)["session"]["id"]
    openai_stub.script_for(CONSOLIDATE, answer())
    openai_stub.script_for(LEARN, answer(
        change("ana-tea", mark, ["ben-u1"], "preference", about="ana"), *more))
    member.turn(ben, user("Ana says she likes green tea", id="ben-u1"))
    return shared, ben


def test_a_learning_job_shown_her_entry_keeps_nothing_when_her_erasure_ends_first(
    api: Api, member: Api, platform: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # SPEC 7: ben's learning job is shown the shared entry learned from ana's turn; her erasure
    # erases it while the helper works. What the helper answers may carry it (here: copied under
    # a new key, and its key forgotten), so the job applies and keeps none of it.
    agent, _, marks, keys = taught(api, platform, openai_stub, "SHOWN")
    ben = member.session(agent)["session"]["id"]
    gate, asked = threading.Event(), threading.Event()
    openai_stub.script_for(CONSOLIDATE, answer())
    openai_stub.script_for(LEARN, answer(
        change("ben-copy", f"Copied: {marks[2]}", ["ben-u1"]),
        change(keys[1], "", [], op="forget"),
        gate=gate, started=asked,
    ))
    try:
        member.turn(ben, user("What do we know?", id="ben-u1"))
        wait_event(asked, "ben's learning job asked its helper")
        assert marks[2] in json.dumps(openai_stub.requests_for(LEARN)[-1])  # it was shown
        platform.ok(platform.post("/v1/org/persons/ana/erase"))
    finally:
        gate.set()
    [job, _] = wait_learned(platform, agent, [ben], jobs=2)
    assert job["sessions"] == [ben]
    assert job["kept"] == []
    assert [d["key"] for d in job["dropped"]] == [ERASED_WITHHELD, ERASED_WITHHELD]
    assert agent_memory(platform, agent)["entries"] == {}
    for mark in marks + keys:
        assert stored_anywhere(graph, mark) == 0, mark


def test_a_learning_job_shown_her_entry_keeps_nothing_when_it_ends_between_her_erasures_parts(
    api: Api, member: Api, platform: Api, graph: Graph, openai_stub: OpenAIStub,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # SPEC 7: ben's learning job is shown the shared entry learned from ana's turn, and applies
    # after her erasure erased her sessions' items but before it erased the agent's entries
    # that rest on them alone. The entry it was shown rests on erased items only: what the
    # helper answers may carry it (here: copied under a new key), so the job keeps none of it.
    agent, _, marks, _ = taught(api, platform, openai_stub, "PARTS")
    ben = member.session(agent)["session"]["id"]
    gate, asked = threading.Event(), threading.Event()
    openai_stub.script_for(CONSOLIDATE, answer())
    openai_stub.script_for(LEARN, answer(
        change("ben-copy", f"Copied: {marks[2]}", ["ben-u1"]), gate=gate, started=asked,
    ))
    erase_entries = ErasureRepository.erase_agent_entries
    reached, go = threading.Event(), threading.Event()

    async def erase_entries_when_told(self: ErasureRepository, *args: Any, **kwargs: Any) -> Any:
        reached.set()  # her sessions' parts are committed
        await asyncio.to_thread(go.wait, 60)
        return await erase_entries(self, *args, **kwargs)

    monkeypatch.setattr(ErasureRepository, "erase_agent_entries", erase_entries_when_told)
    with ThreadPoolExecutor(1) as pool:
        try:
            member.turn(ben, user("What do we know?", id="ben-u1"))
            wait_event(asked, "ben's learning job asked its helper")
            erasure = pool.submit(platform.post, "/v1/org/persons/ana/erase")
            wait_event(reached, "her erasure erased her sessions")
            gate.set()
            [job, _] = wait_learned(platform, agent, [ben], jobs=2)
        finally:
            gate.set()
            go.set()
        assert erasure.result(timeout=60).status_code == 200
    assert job["sessions"] == [ben]
    assert job["kept"] == []
    assert agent_memory(platform, agent)["entries"] == {}
    assert stored_anywhere(graph, marks[2]) == 0


def test_a_turn_shown_her_entry_while_her_erasure_runs_lists_its_opaque_key(
    api: Api, member: Api, platform: Api, graph: Graph, openai_stub: OpenAIStub,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # SPEC 7: ben's turn is shown the shared entry learned from ana's turn, and her erasure
    # runs while the turn is being recorded (its session's lock held). The erasure waits for
    # the turn, and the turn lists the entry by the erasure's opaque key, never by her key.
    agent, _, marks, keys = taught(api, platform, openai_stub, "RACE")
    ben = member.session(agent)["session"]["id"]
    openai_stub.script_for(CONSOLIDATE, answer())
    openai_stub.script_for(LEARN, answer())
    record = TurnRepository.record
    reached, go = threading.Event(), threading.Event()

    async def record_when_told(self: TurnRepository, *args: Any, **kwargs: Any) -> Any:
        if not go.is_set():  # what the turn is shown is read; it records when told
            reached.set()
            await asyncio.to_thread(go.wait, 60)
        return await record(self, *args, **kwargs)

    monkeypatch.setattr(TurnRepository, "record", record_when_told)
    with ThreadPoolExecutor(2) as pool:
        try:
            turn = pool.submit(member.turn, ben, user("What do we know?", id="ben-u1"))
            wait_event(reached, "ben's turn read what it is shown")
            erasure = pool.submit(platform.post, "/v1/org/persons/ana/erase")
            deadline = time.monotonic() + 60
            while not erasure.done() and not graph.value(
                "SHOW TRANSACTIONS YIELD status, currentQuery WHERE status STARTS WITH "
                "'Blocked' AND currentQuery CONTAINS 'shownAgent' RETURN count(*)"
            ):
                assert time.monotonic() < deadline, "the erasure neither ended nor waits"
                time.sleep(0.05)
            assert not erasure.done(), "the erasure did not wait for the turn being recorded"
        finally:
            go.set()
        recorded = turn.result(timeout=60)["turn"]
        assert erasure.result(timeout=60).status_code == 200
    shown = member.ok(member.get(f"/v1/sessions/{ben}/turns/{recorded['id']}"))["turn"][
        "shownAgent"]
    [listed] = shown
    assert listed.startswith("erased-"), shown
    wait_learned(platform, agent, [ben], jobs=2)
    for mark in marks + keys:
        assert stored_anywhere(graph, mark) == 0, mark


def test_a_change_about_her_dropped_from_another_members_session_leaves_with_her_erasure(
    api: Api, member: Api, platform: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # SPEC 7, A5: what jobs kept of the changes about her goes, from whichever session; what
    # they kept of others' stays
    shared, ben = ben_tells_of_ana(
        member, platform, openai_stub, "ANA-TOLD-1f",
        change("ben-desk", "BEN-TOLD-2f", ["ben-u1"], "nonsense", about="ben",
               visibility="private"),
    )
    [job] = wait_learned(platform, shared, [ben])
    assert {d["key"] for d in job["dropped"]} == {"ana-tea", "ben-desk"}

    platform.ok(platform.post("/v1/org/persons/ana/erase"))

    [job] = learning_jobs(platform, shared)
    by_key = {d["key"]: d for d in job["dropped"]}
    assert set(by_key) == {ERASED_WITHHELD, "ben-desk"}
    assert not by_key[ERASED_WITHHELD]["proposal"]
    assert "BEN-TOLD-2f" in by_key["ben-desk"]["proposal"]
    assert stored_anywhere(graph, "ANA-TOLD-1f") == 0
    assert stored_anywhere(graph, "BEN-TOLD-2f") > 0
    assert holding_value(graph, "ana") == 0


def test_the_erasure_record_does_not_tell_whose_opaque_id_stands_for_her(
    api: Api, platform: Api, graph: Graph
) -> None:
    # SPEC 7: her id as a stored value goes; the record names whom it erased, and nothing that
    # leads from her name to what now stands for it
    sid = api.session()["session"]["id"]
    api.turn(sid, user("Hello.", id="u-1"))
    api.wait_idle(sid)
    platform.ok(platform.post("/v1/org/persons/ana/erase"))

    opaque = graph.value("MATCH (p:Person {org: 'acme', erased: true}) RETURN p.id")
    assert str(opaque).startswith("erased-")
    assert graph.value("MATCH (i:Item {id: 'u-1', session: $s}) RETURN i.author", s=sid) == opaque
    record = graph.value("MATCH (e:Erasure {person: 'ana'}) RETURN properties(e)")
    assert opaque not in record.values()


def test_a_learning_job_goes_on_past_a_session_deleted_while_it_learned(
    api: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # SPEC 7, A2: a session deleted while the job learned from the agent's sessions applies
    # nothing of it; the job still learns from the others and ends as it would have
    helper_is_stub(api)
    agent = api.agent()["id"]
    first, second = api.session(agent)["session"]["id"], api.session(agent)["session"]["id"]
    held, consolidating = threading.Event(), threading.Event()
    learning, learn_started = threading.Event(), threading.Event()
    openai_stub.script_for(CONSOLIDATE, Reply(gate=held, started=consolidating))
    openai_stub.script_for(
        LEARN,
        answer(change("first-habit", "Learned first.", ["u-1"]), gate=learning,
               started=learn_started),
        answer(change("second-habit", "Learned second.", ["u-1"])),
    )
    api.turn(first, user("Book trains where you can.", id="u-1"))
    wait_event(consolidating, "the first session's consolidation runs")
    api.turn(second, user("Never book night flights for me.", id="u-1"))
    api.wait_idle(second)
    held.set()  # both sessions' turns wait for one learning job
    wait_event(learn_started, "the learning job asked about its first session")
    [asked] = openai_stub.requests_for(LEARN)
    learned, deleted = (
        (first, second) if new_items(asked)[0]["content"].startswith("Book") else (second, first))
    assert api.ok(api.http.delete(f"/v1/sessions/{deleted}")) == {"deleted": deleted}
    learning.set()

    [job] = wait_learned(api, agent, [learned])
    assert (job["status"], job["error"]) == ("succeeded", None)
    entries = agent_memory(api, agent)["entries"]
    assert [e["sources"][0]["session"] for e in entries.values()] == [learned]


AGENT_STORY = """query($a: ID!) { agent(id: $a) { memory { entries(first: 50) { nodes {
  key content changes(first: 50) { nodes { op content before } } } } } } }"""


def test_an_entry_another_change_took_over_keeps_nothing_of_hers_in_its_story(
    api: Api, platform: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # SPEC 7: the memory derived from her items goes from the change chains of the entries the
    # erasure leaves: what rested only on her items is withheld, the rest of the story stays
    agent, _, marks, keys = taught(api, platform, openai_stub, "PAST", learned="past-habit")
    agent_remember(platform, agent, keys[1], "The platform's own words.")
    agent_forget(platform, agent, keys[1])
    agent_remember(platform, agent, keys[1], "The platform's words again.")

    platform.ok(platform.post("/v1/org/persons/ana/erase"))

    answer = platform.graphql(AGENT_STORY, a=agent)
    [entry] = flat(answer["data"])["agent"]["memory"]["entries"]
    assert entry["content"] == "The platform's words again."
    assert [(c["op"], c["content"], c["before"]) for c in entry["changes"]] == [
        ("REMEMBER", "The platform's words again.", "The platform's own words."),
        ("FORGET", "The platform's own words.", "The platform's own words."),
        ("REMEMBER", "The platform's own words.", ERASED_WITHHELD),
        ("REMEMBER", ERASED_WITHHELD, None),
    ]
    for mark in marks:
        assert stored_anywhere(graph, mark) == 0, mark


def test_a_deletion_that_stopped_before_its_agents_finishes_when_asked_again(
    api: Api, platform: Api, graph: Graph, openai_stub: OpenAIStub,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # SPEC 7: DELETE erases the memory derived from the session; stopped half way (the
    # process died after the session's part), the same DELETE finishes it, and the session
    # is not found either way
    agent, sid, marks, keys = taught(api, platform, openai_stub, "DEL")

    def crash(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("the process died here")

    monkeypatch.setattr(ErasureRepository, "erase_agent_entries", crash)
    assert api.http.delete(f"/v1/sessions/{sid}").status_code == 500
    monkeypatch.undo()
    assert api.get(f"/v1/sessions/{sid}").status_code == 404
    assert keys[1] in agent_memory(platform, agent)["entries"]

    again = api.http.delete(f"/v1/sessions/{sid}")
    assert again.status_code == 404, again.text
    assert keys[1] not in agent_memory(platform, agent)["entries"]
    for mark in marks + keys:
        assert stored_anywhere(graph, mark) == 0, mark


def test_deleting_a_session_waits_for_no_agent_that_learned_nothing_from_it(
    api: Api, platform: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # SPEC 7: DELETE erases the memory derived from the session under the locks of the agents
    # that hold it; another agent of the org, at work on a session of its own (its lock held,
    # not yet committed), learned nothing from it and does not hold the deletion up
    agent, sid, marks, keys = taught(api, platform, openai_stub, "ALONE")
    other = api.session()["session"]["id"]
    with ThreadPoolExecutor(1) as pool, held(
        graph, "MATCH (s:Session {id: $s}) SET s._lock = true REMOVE s._lock", s=other
    ):
        deleting = pool.submit(api.http.delete, f"/v1/sessions/{sid}")
        while not deleting.done():
            assert not blocked(graph, "SET er.agentEntries"), "the deletion waited for " + other
            time.sleep(0.05)
    assert api.ok(deleting.result()) == {"deleted": sid}
    assert keys[1] not in agent_memory(platform, agent)["entries"]
    for mark in marks + keys:
        assert stored_anywhere(graph, mark) == 0, mark


def test_a_record_an_erasure_withholds_while_a_start_names_it_stays_naming_no_one(
    member: Api, platform: Api, graph: Graph, openai_stub: OpenAIStub,
    start_server: Callable[..., RunningServer],
) -> None:
    # SPEC 7 on a graph an earlier version wrote: a start names whom each learning record of a
    # dropped change is about, and reads the record again under its lock, so a record that an
    # erasure withholds meanwhile (not yet committed when the start read it) names no one
    shared, ben = ben_tells_of_ana(member, platform, openai_stub, "ANA-NAMED-1f")
    wait_learned(platform, shared, [ben])
    graph.rows("MATCH (d:DroppedChange) REMOVE d.about")  # as an earlier version wrote it
    failed: list[BaseException] = []

    def start() -> None:
        try:
            start_server()
        except BaseException as exc:  # the test's thread asserts it
            failed.append(exc)

    # an erasure withholding the record, not yet committed
    with held(graph, "MATCH (d:DroppedChange) SET d.erased = true, d.proposal = null, "
              "d.key = 'withheld', d.reason = 'withheld', d.about = null"):
        starting = threading.Thread(target=start)
        starting.start()
        wait_blocked(graph, "SET d.about = r.about", "the start never waited for the record")
    starting.join()
    assert failed == []
    assert graph.rows("MATCH (d:DroppedChange) RETURN d.erased AS erased, d.about AS about") == [
        {"erased": True, "about": None}
    ]


def test_a_graph_written_before_the_erasure_kept_its_marks_is_given_them_at_start(
    api: Api, member: Api, platform: Api, graph: Graph, openai_stub: OpenAIStub,
    start_server: Callable[..., RunningServer],
) -> None:
    # SPEC 7 on a graph an earlier version wrote: an item retention emptied without marking it
    # expired, an erasure record that kept its opaque id, a learning record of a change about
    # ana that does not name her. A server's start gives each the mark the erasure reads.
    sid, agent, item = promoted(api, "seat", "Ana prefers window seats.")
    graph.rows("MATCH (i:Item {id: $item, session: $s}) SET i.content = null, i.erased = true",
               item=item, s=sid)  # as retention emptied it before it marked `expired`
    shared, ben = ben_tells_of_ana(member, platform, openai_stub, "ANA-OLDREC-1f")
    wait_learned(platform, shared, [ben])
    graph.rows("MATCH (d:DroppedChange) REMOVE d.about")
    graph.rows("CREATE (:Erasure {id: 'era-old', org: 'acme', person: 'zed', status: 'done', "
               "replacement: 'erased-old'})")

    start_server()

    other = api.session(agent)["session"]["id"]
    api.wait_idle(other)
    assert api.ok(api.http.delete(f"/v1/sessions/{other}")) == {"deleted": other}
    assert agent_memory(api, agent)["entries"]["seat"]["content"] == "Ana prefers window seats."
    assert graph.value("MATCH (er:Erasure) WHERE er.replacement IS NOT NULL RETURN count(er)") == 0
    platform.ok(platform.post("/v1/org/persons/ana/erase"))
    assert stored_anywhere(graph, "ANA-OLDREC-1f") == 0
