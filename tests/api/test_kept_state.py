"""The kept state of a session's head (each entry's CURRENT change, the processed
ledger and its mark) always equals what its full history derives (memory_at.cypher and
derived_branch_items.cypher, the slow derivations kept for this test), after any sequence of
turns, commands, consolidations, forks and reverts, with runs landing in between."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import hypothesis.strategies as st
from hypothesis import HealthCheck, given, settings

from app.domain.sessions import Entry
from app.store.catalog import statement
from tests.api.test_agent_memory import agent_memory, post_agent, remember
from tests.api.test_erasure import emptied_by_retention
from tests.api.test_promotion import fill, subagent
from tests.conftest import Api, Graph, RunningServer, assistant, user
from tests.openai_stub import OpenAIStub, Reply

SAYINGS = [
    "My name is Ana Lima.",
    "I prefer window seats.",
    "Remember that the hotel is the Ritz.",
    "We decided to fly on Monday.",
    "Our budget is 3000 euros.",
    "Thanks, that is all for now.",
]
KEYS = ["seat", "hotel", "budget"]

turns = st.builds(lambda n: ("turn", n), st.integers(0, len(SAYINGS) - 1))
remembers = st.builds(lambda k, n: ("remember", k, n), st.sampled_from(KEYS), st.integers(0, 9))
forgets = st.builds(lambda k: ("forget", k), st.sampled_from(KEYS))
operations = st.lists(
    st.one_of(
        turns,
        turns,
        remembers,
        forgets,
        st.just(("refresh",)),
        st.just(("wait",)),
        st.builds(lambda n: ("fork", n), st.integers(0, 99)),
        st.builds(lambda n: ("revert", n), st.integers(0, 99)),
    ),
    min_size=3,
    max_size=12,
)


# A session as a graph from before the kept state has it: no processed ledger, no CURRENT
# change, no state kept on its entries
UNKEPT = (
    "MATCH (s:Session {id: $id}) REMOVE s.processed, s.processedSeq "
    "WITH s MATCH (s)-[:HAS_ENTRY]->(e)-[now:CURRENT]->() DELETE now "
    "REMOVE e.content, e.kind, e.status, e.updatedAt, e.change, e.sources, e.sourceUids"
)


def derived(graph: Graph, session: str) -> dict[str, Any]:
    """The head's memory and unprocessed items as the whole history derives them."""
    head = graph.value("MATCH (:Session {id: $id})-[:HEAD]->(h) RETURN h.id", id=session)
    [memory] = graph.rows(statement("memory_at"), org="acme", person=None, versions=[head])
    branch = graph.rows(statement("derived_branch_items"), id=session)
    return {
        "entries": sorted((e["key"], e["change"]) for e in memory["entries"]),
        # what each entry shows: its state and its sources (ids and uids, in timeline order)
        "states": sorted(
            (e["key"], e["content"], e["kind"], e["status"], e["updatedAt"], e["change"],
             tuple(i["id"] for i in e["sources"]), tuple(i["uid"] for i in e["sources"]))
            for e in memory["entries"]
        ),
        "processed": memory["processed"],
        "mark": memory["processedSeq"],
        "unprocessed": [
            row["item"]["uid"]
            for row in branch
            if not row["processed"] and row["item"]["type"] != "memory_edit"
        ],
    }


def kept(graph: Graph, session: str) -> dict[str, Any]:
    """The same, read from the kept state by the statements the service runs."""
    [view] = graph.rows(statement("session_views"), org="acme", person=None, ids=[session],
                         items=True, turns=False, itemFields=["uid", "id"])
    unprocessed = graph.rows(statement("unprocessed_items"), id=session)
    entries = [Entry.from_row(e, ("uid", "id")) for e in view["entries"]]
    return {
        "entries": sorted((e.key, e.change) for e in entries),
        "states": sorted(
            (e.key, e.content, e.kind, e.status, e.updated_at, e.change, e.sources,
             tuple(i.uid for i in e.items()))
            for e in entries
        ),
        "processed": view["processed"],
        "mark": view["processedSeq"],
        "unprocessed": [row["item"]["uid"] for row in unprocessed],
    }


def with_current(api: Api, session: str, path: str, body: dict[str, Any]) -> Any:
    """POST a checked command with the head and revision just read, again after a 409 (a run
    landed in between)."""
    for _ in range(20):
        current = api.view(session)["session"]
        response = api.post(
            f"/v1/sessions/{session}/{path}",
            {"expected": current["head"], "revision": current["revision"], **body},
        )
        if response.status_code != 409 or response.json()["_tag"] != "SessionConflict":
            return response
        if "memory has no key" in response.json()["message"]:
            return response
    raise AssertionError("the session kept moving")


def apply(api: Api, session: str, op: tuple[Any, ...]) -> str:
    """Run one operation; the session to go on with (a fork goes on in the fork)."""
    match op:
        case ("turn", n):
            api.turn(session, user(SAYINGS[n]), assistant("Noted."))
        case ("remember", key, n):
            command = {"_tag": "Remember", "key": key, "content": f"{key} {n}", "kind": "fact"}
            assert with_current(api, session, "memory", {"command": command}).status_code == 200
        case ("forget", key):
            forget = {"command": {"_tag": "Forget", "key": key}}
            answer = with_current(api, session, "memory", forget)
            assert answer.status_code in (200, 409), answer.text
        case ("refresh",):
            answer = with_current(api, session, "memory", {"command": {"_tag": "Refresh"}})
            assert answer.status_code == 200, answer.text
        case ("wait",):
            api.wait_idle(session)
        case ("fork", n):
            versions = api.ok(api.get(f"/v1/sessions/{session}/versions"))["versions"]
            at = versions[n % len(versions)]["id"]
            fork = api.ok(api.post(f"/v1/sessions/{session}/fork", {"at": at}), 201)
            return str(fork["session"]["id"])
        case ("revert", n):
            versions = api.ok(api.get(f"/v1/sessions/{session}/versions"))["versions"]
            to = versions[n % len(versions)]["id"]
            assert with_current(api, session, "revert", {"to": to}).status_code == 200
    return session


@settings(
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=operations)
def test_the_kept_state_of_every_head_equals_its_derived_history(
    api: Api, graph: Graph, ops: list[tuple[Any, ...]]
) -> None:
    # S2, S3, S7, S9, S13, S14, S17
    session = str(api.session()["session"]["id"])
    sessions = [session]
    for op in ops:
        session = apply(api, session, op)
        if session not in sessions:
            sessions.append(session)
    for each in sessions:
        api.wait_idle(each)
    for each in sessions:
        assert kept(graph, each) == derived(graph, each), (each, ops)
        # and what a client reads is that state
        memory = api.ok(api.get(f"/v1/sessions/{each}/memory"))
        assert memory["processed"] == derived(graph, each)["processed"]
        assert sorted(memory["entries"]) == [key for key, _ in derived(graph, each)["entries"]]


def test_a_session_made_before_the_state_was_kept_gets_it_at_start(
    api: Api, graph: Graph, start_server: Callable[..., RunningServer]
) -> None:
    # A graph (or an imported export) from before the kept state reads the same once a
    # service starts on it: the state is derived once from the history and kept
    session = str(api.session()["session"]["id"])
    api.turn(session, user("Remember that the hotel is the Ritz."), assistant("Noted."))
    api.wait_idle(session)
    api.remember(session, "seat", "Window seat.")
    before = api.ok(api.get(f"/v1/sessions/{session}/memory"))
    assert "seat" in before["entries"]
    assert len(before["entries"]) > 1  # and what the run learned
    assert before["processed"]
    graph.rows(UNKEPT, id=session)
    assert api.ok(api.get(f"/v1/sessions/{session}/memory"))["entries"] == {}

    started = start_server()
    client = Api(started.url, api.token)
    try:
        assert client.ok(client.get(f"/v1/sessions/{session}/memory")) == before
        assert kept(graph, session) == derived(graph, session)
    finally:
        client.http.close()


# Each agent entry's sources as its current change's record derives them (what
# keep_agent_sources keeps), and as the entry keeps them
AGENT_SOURCES = """
MATCH (:Agent {id: $agent})-[:HAS_MEMORY]->(e:AgentEntry)
CALL (e) {
  OPTIONAL MATCH (e)-[:CURRENT]->(:AgentChange)-[r:CITES]->(i:Item)
    WHERE NOT coalesce(i.erased, false)
  OPTIONAL MATCH (:Session {id: r.session})-[:WITH]->(p:Person)
  WITH r, i, p ORDER BY r.session, i.seq
  WITH r, i, p WHERE i IS NOT NULL
  RETURN collect([r.session, i.id, i.uid, coalesce(p.id, '')]) AS derived
}
RETURN e.key AS key, derived,
       [n IN range(0, size(coalesce(e.sourceUids, [])) - 1) |
        [e.sourceSessions[n], e.sourceItems[n], e.sourceUids[n], e.sourcePersons[n]]] AS kept
"""


def test_entries_made_before_they_kept_their_state_get_it_at_start(
    api: Api, graph: Graph, start_server: Callable[..., RunningServer]
) -> None:
    # S2, A3: a graph from before each entry kept its state (a session entry's state and
    # sources, an agent entry's sources), its sessions' state kept all the same, reads the
    # same once a service starts on it
    _, sid = subagent(api)
    fill(api, sid)
    promoted = api.ok(api.post(f"/v1/sessions/{sid}/promote", {"name": "helper"}), 201)
    agent = str(promoted["agent"]["id"])
    before = api.ok(api.get(f"/v1/sessions/{sid}/memory"))
    before_agent = agent_memory(api, agent)
    assert all(e["sources"] for e in before_agent["entries"].values())
    graph.rows(
        "MATCH (:Session {id: $id})-[:HAS_ENTRY]->(e) "
        "REMOVE e.content, e.kind, e.status, e.updatedAt, e.change, e.sources, e.sourceUids",
        id=sid)
    graph.rows(
        "MATCH (:Agent {id: $id})-[:HAS_MEMORY]->(e) "
        "REMOVE e.sourceSessions, e.sourceItems, e.sourceUids, e.sourcePersons", id=agent)
    assert api.ok(api.get(f"/v1/sessions/{sid}/memory"))["entries"] == {}
    assert agent_memory(api, agent) != before_agent

    started = start_server()
    client = Api(started.url, api.token)
    try:
        assert client.ok(client.get(f"/v1/sessions/{sid}/memory")) == before
        assert agent_memory(client, agent) == before_agent
        assert kept(graph, sid) == derived(graph, sid)
        for row in graph.rows(AGENT_SOURCES, agent=agent):
            assert row["kept"] == row["derived"], row["key"]
    finally:
        client.http.close()


def test_an_item_retention_erases_is_no_source_of_the_agent_entries_citing_it(
    api: Api, graph: Graph, start_server: Callable[..., RunningServer]
) -> None:
    # A3: an erased item is no agent entry's source: the erasure keeps again the sources of
    # the entries citing it, which stay what their changes' record derives
    _, sid = subagent(api)
    api.remember(sid, "seat", "Ana prefers window seats.", "preference")
    api.remember(sid, "airline", "We fly with Lufthansa.", "decision")
    promoted = api.ok(api.post(f"/v1/sessions/{sid}/promote", {"name": "helper"}), 201)
    agent = str(promoted["agent"]["id"])
    before = agent_memory(api, agent)
    [old] = before["entries"]["seat"]["sources"]
    assert old["session"] == sid
    emptied_by_retention(graph, start_server, sid, old["item"])  # the only old item

    after = agent_memory(api, agent)
    assert after["entries"]["seat"] == {**before["entries"]["seat"], "sources": []}
    assert after["entries"]["airline"] == before["entries"]["airline"]
    for row in graph.rows(AGENT_SOURCES, agent=agent):
        assert row["kept"] == row["derived"], row["key"]


def test_an_agent_memory_whose_sources_retention_takes_is_at_a_new_version(
    api: Api, graph: Graph, start_server: Callable[..., RunningServer]
) -> None:
    # A10: a version names one state of the agent memory: retention taking an entry's source
    # changes what the memory shows, so its version grows, and a command at the version read
    # before is refused (409), as after any other change
    _, sid = subagent(api)
    api.remember(sid, "seat", "Ana prefers window seats.", "preference")
    promoted = api.ok(api.post(f"/v1/sessions/{sid}/promote", {"name": "helper"}), 201)
    agent = str(promoted["agent"]["id"])
    before = agent_memory(api, agent)
    [old] = before["entries"]["seat"]["sources"]
    emptied_by_retention(graph, start_server, sid, old["item"])

    after = agent_memory(api, agent)
    assert after["entries"]["seat"]["sources"] == []
    assert after["version"] > before["version"]
    stale = post_agent(api, agent, before["version"], remember("note", "Kept.", "procedure"))
    assert (stale.status_code, stale.json()["_tag"]) == (409, "AgentConflict")


SOURCED = """query Sourced($id: ID!) {
  session(id: $id) { head revision memory { entries(first: 50) { nodes { key
    sources { id turn { id } } } } } } }"""


def test_a_view_kept_before_the_state_was_filled_in_is_read_again_after_it(
    api: Api, graph: Graph, start_server: Callable[..., RunningServer]
) -> None:
    # S15: filling in a missing state (at start, or after an import) changes what
    # the session shows, so it moves the revision. A server that answered, and kept, the view
    # while the state was missing (an import in flight) then reads it again: a nested view shows
    # the entries, and a Configure at the revision it answered is refused (S12), not answered
    # with the view it kept.
    session = str(api.session()["session"]["id"])
    api.turn(session, user("Remember that the hotel is the Ritz."), assistant("Noted."))
    api.wait_idle(session)
    reader = Api(start_server().url, api.token)  # started before the state goes missing

    def sourced() -> Any:
        answer = reader.graphql(SOURCED, id=session)
        assert "errors" not in answer, answer
        return answer["data"]["session"]

    try:
        whole = api.graphql(SOURCED, id=session)["data"]["session"]
        assert whole["memory"]["entries"]["nodes"]
        graph.rows(UNKEPT, id=session)
        missing = sourced()
        assert missing["memory"]["entries"]["nodes"] == []
        assert sourced() == missing  # and kept

        start_server()  # derives and keeps the missing state
        assert sourced() == {**whole, "revision": missing["revision"] + 1}
        stale = reader.post(f"/v1/sessions/{session}/memory", {
            "expected": missing["head"], "revision": missing["revision"],
            "command": {"_tag": "Configure", "use": False}})
        assert stale.status_code == 409, stale.text
        assert stale.json()["_tag"] == "SessionConflict"
        configured = reader.ok(reader.command(session, {"_tag": "Configure", "use": False}))
        assert sorted(configured["memory"]["entries"]) == sorted(
            e["key"] for e in whole["memory"]["entries"]["nodes"])
    finally:
        reader.http.close()


def test_a_quiet_run_landing_after_a_fork_at_its_head_stays_its_own_sessions(
    api: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # S3, S7: the fork was made before the run read the turn, so the fork has not
    # processed those items, and its history must not say it has (seen once as a kept state
    # that differed from the derived one, when a quiet run hung on the head a fork shared)
    sid = str(api.session(model="openai:test")["session"]["id"])
    asked, answer = threading.Event(), threading.Event()
    openai_stub.script_for("memory_changes", Reply(gate=answer, started=asked))  # keeps nothing
    try:
        turn = api.turn(sid, user("Thanks, that is all."), assistant("You are welcome."))
        assert asked.wait(20), "the run never asked the model"
        forked = api.ok(api.post(f"/v1/sessions/{sid}/fork", {}), 201)["session"]["id"]
    finally:
        answer.set()
    [run] = api.wait_idle(sid)
    assert run["status"] == "succeeded"
    assert run["kept"] == []
    assert run["read"] == turn["turn"]["items"]
    for each in (sid, forked):
        assert kept(graph, each) == derived(graph, each), each
    assert api.ok(api.get(f"/v1/sessions/{sid}/memory"))["processed"] == turn["turn"]["items"]
    assert api.ok(api.get(f"/v1/sessions/{forked}/memory"))["processed"] == []
