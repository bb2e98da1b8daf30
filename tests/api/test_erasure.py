"""Erasure of a person's data through HTTP and GraphQL (SPEC section 7).

Unique marker strings go in through every write path (turn items, a person's Remember,
consolidation and learning by the scripted model, an agent Remember about the person, a fork,
a promotion); after the erasure a scan of every property of every node and relationship finds
none of the erased person's, and every one of another member's.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from app.memory.changes.checks import ERASED_SINCE, ERASED_WITHHELD
from app.store.database import Target
from app.store.erasures import ErasureRepository
from tests.api.test_agent_memory import agent_memory, agent_remember, instructions
from tests.api.test_consolidation import stored_anywhere
from tests.api.test_learning import (
    CONSOLIDATE,
    LEARN,
    answer,
    change,
    helper_is_stub,
    learning_jobs,
    wait_event,
    wait_learned,
)
from tests.api.test_provenance import STORY, SUPPORTS
from tests.conftest import ROOT, Api, Graph, RunningServer, flat, user
from tests.openai_stub import OpenAIStub
from tests.test_cli import CLI, run_cli

Body = dict[str, Any]

ANA = ["ANA-TURN-1f", "ANA-CONS-2f", "ANA-LEARN-3f", "ANA-REM-4f", "ANA-ABOUT-5f",
       "ANA-FORK-6f", "ANA-SUB-7f"]
BEN = ["BEN-TURN-1f", "BEN-CONS-2f", "BEN-LEARN-3f", "BEN-REM-4f", "BEN-ABOUT-5f"]


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
          about: str) -> None:
    """A turn (marks[0]) that the scripted model consolidates (marks[1]) and learns from
    (marks[2], shared, supported only by the turn's item)."""
    openai_stub.script_for(
        CONSOLIDATE, answer(change("trip", marks[1], [f"{about}-u1"], kind="fact"))
    )
    openai_stub.script_for(LEARN, answer(change(f"{about}-habit", marks[2], [f"{about}-u1"])))
    client.turn(sid, user(f"Hello {marks[0]}", id=f"{about}-u1"))
    wait_learned(client, agent, [sid], jobs=1)


def plant(api: Api, member: Api, platform: Api, openai_stub: OpenAIStub) -> dict[str, str]:
    helper_is_stub(platform)
    agent = platform.agent(shared=True)["id"]
    ana = api.session(agent)["session"]["id"]
    ben = member.session(agent)["session"]["id"]
    teach(api, openai_stub, agent, ana, ANA, "ana")
    teach(member, openai_stub, agent, ben, BEN, "ben")
    api.remember(ana, "note", ANA[3])
    member.remember(ben, "note", BEN[3])
    agent_remember(platform, agent, "ana-likes", ANA[4], "preference", about="ana")
    agent_remember(platform, agent, "ben-likes", BEN[4], "preference", about="ben")
    fork = api.ok(api.post(f"/v1/sessions/{ana}/fork", {}), 201)["session"]["id"]
    api.remember(fork, "fork-note", ANA[5])
    sub = api.session(agent, kind="subagent", parent=ana)["session"]["id"]
    api.remember(sub, "routine", ANA[6], "procedure")
    promoted = api.ok(api.post(f"/v1/sessions/{sub}/promote", {}), 201)["agent"]["id"]
    return {"agent": agent, "ana": ana, "ben": ben, "fork": fork, "promoted": promoted}


def bens_views(member: Api, made: dict[str, str]) -> Body:
    return {
        "session": member.view(made["ben"]),
        "instructions": instructions(member, made["ben"]),
        "agent": agent_memory(member, made["agent"])["entries"],
        # stories: each entry's changes, what they cite, and what each item supports
        "story": flat(member.graphql(STORY, id=made["ben"])),
        "supports": flat(member.graphql(SUPPORTS, id=made["ben"])),
        "search": [  # (Lucene's scores follow what the index holds)
            {k: v for k, v in hit.items() if k != "score"}
            for hit in member.ok(member.get("/v1/search", params={"q": "BEN-REM-4f"}))["hits"]
        ],
    }


def test_erasing_a_person_leaves_no_marker_of_theirs_and_every_marker_of_others(
    api: Api, member: Api, platform: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    made = plant(api, member, platform, openai_stub)
    for mark in ANA + BEN:
        assert stored_anywhere(graph, mark) > 0, mark
    before = bens_views(member, made)
    assert {"ana-habit", "ana-likes"} <= set(agent_memory(platform, made["agent"])["entries"])

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
    assert counts["agentEntries"] == 3  # learned from her, about her, promoted from her

    # no marker of hers anywhere, every one of ben's still there; her id is no stored value
    for mark in ANA:
        assert stored_anywhere(graph, mark) == 0, mark
    for mark in BEN:
        assert stored_anywhere(graph, mark) > 0, mark
    assert holding_value(graph, "ana") == 0
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
    hers = ("ana-habit", "ana-likes")
    assert after["agent"] == {k: v for k, v in before["agent"].items() if k not in hers}
    shown, was = after["instructions"]["included"], before["instructions"]["included"]
    assert set(hers) <= set(was["agent"])
    assert shown == {"session": was["session"],
                     "agent": [k for k in was["agent"] if k not in hers]}
    assert not any(mark in after["instructions"]["memory"] for mark in ANA)
    # erased entries leave the service's views too
    assert set(agent_memory(platform, made["agent"])["entries"]) == {"ben-habit", "ben-likes"}
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
    agent_remember(platform, agent, "ana-likes", "ANA-HALF-9f", "preference", about="ana")

    def crash(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("the process died here")

    # the sessions are erased, then the process dies before the agents
    monkeypatch.setattr(ErasureRepository, "erase_agent_entries", crash)
    assert platform.post("/v1/org/persons/ana/erase").status_code == 500
    assert stored_anywhere(graph, "ANA-HALF-0f") == 0
    assert stored_anywhere(graph, "ANA-HALF-9f") > 0
    monkeypatch.undo()

    erased = platform.ok(platform.post("/v1/org/persons/ana/erase"))["erasure"]
    assert stored_anywhere(graph, "ANA-HALF-9f") == 0
    assert erased["counts"]["sessions"] == 2  # counted once, across both attempts
    assert erased["counts"]["agentEntries"] == 1
    assert platform.ok(platform.get("/v1/org/erasures"))["erasures"] == [erased]


def wait_settled(graph: Graph, timeout: float = 60) -> None:
    """Wait until no run or learning job is queued or running."""
    deadline = time.monotonic() + timeout
    while graph.value(
        "MATCH (r) WHERE (r:Run OR r:LearningJob) AND r.status IN ['queued', 'running'] "
        "RETURN count(r)"
    ):
        assert time.monotonic() < deadline, "jobs still pending"
        time.sleep(0.05)


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
    api.remember(sid, "note", "ANA-DEL-1f")
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
    assert graph.value(
        "MATCH (:Session {id: $fork})-[:HEAD]->(:Version)-[:PARENT*]->(:Version)-[:ADDS]->"
        "(i:Item {id: 'u-1'}) RETURN i.erased", fork=fork,
    ) is True


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


def test_a_run_whose_items_retention_erased_while_its_model_worked_applies_nothing(
    api: Api, graph: Graph, openai_stub: OpenAIStub,
    start_server: Callable[..., RunningServer],
) -> None:
    # SPEC 7: applying re-checks what the run read
    api.patch("/v1/org/settings", {"model": "openai:stub"})
    sid = api.session()["session"]["id"]
    gate, started = threading.Event(), threading.Event()
    openai_stub.script_for(CONSOLIDATE, answer(
        change("trip", "OLD-HELD-1f", ["u-1"], kind="fact"), gate=gate, started=started,
    ))
    api.turn(sid, user("I fly OLD-HELD-1f", id="u-1"))
    wait_event(started, "the run asked its model")
    graph.rows("MATCH (i:Item {id: 'u-1', session: $s}) SET i.at = i.at - 2 * 86400000", s=sid)
    start_server(item_retention_days=1, retention_poll_seconds=0.1)
    deadline = time.monotonic() + 60
    while stored_anywhere(graph, "OLD-HELD-1f"):
        assert time.monotonic() < deadline, "retention erased nothing"
        time.sleep(0.05)
    gate.set()

    [run] = api.wait_idle(sid)
    assert run["status"] == "succeeded"
    assert run["kept"] == []
    assert [(d["reason"], d["proposal"]) for d in run["dropped"]] == [(ERASED_SINCE, "")]
    assert api.view(sid)["memory"]["entries"] == {}
    assert stored_anywhere(graph, "OLD-HELD-1f") == 0
