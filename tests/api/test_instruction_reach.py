"""A turn and GET instructions read only what the instructions can reach
(`instruction_entries.cypher`): the newest active entries of the session and of its agent,
without sources, cut once the contents before an entry hold the budget. Whatever the entries,
what a turn is shown equals what the full views derive: S5, S6, A8 and A9 applied
(`instructions.compose`) to every entry of the session's view and every agent entry its person
sees, as a client reads them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, example, given, settings

from app.domain.enums import Kind, Status
from app.domain.sessions import Entry
from app.domain.turns import Reachable
from app.memory.turns.instructions import compose
from app.store.catalog import statement
from app.store.database import Target
from tests import conftest
from tests.api.test_agent_memory import agent_command, agent_memory, forget, remember
from tests.conftest import Api, Graph, RunningServer, make_token, user
from tests.openai_stub import OpenAIStub

BUDGET = 1500
AGENT_KEYS = [f"a{n}" for n in range(12)]  # each may be shared, and private to ana or to ben
OWNERS = [None, "ana", "ben"]  # None: shared


def contents(longest: int) -> st.SearchStrategy[str]:
    return st.builds(
        lambda n, wide: "Fact " + ("😀" if wide else "x") * n,
        st.integers(0, longest),
        st.booleans(),  # characters outside the BMP count once, as Python counts them
    )


forgotten = st.sampled_from([False, False, False, True])
session_entries = st.lists(
    st.tuples(st.integers(10, 99), contents(200), forgotten),  # key s10 ... s99
    min_size=4,
    max_size=20,
    unique_by=lambda entry: entry[0],
)
agent_entries = st.lists(
    st.tuples(st.sampled_from(AGENT_KEYS), st.sampled_from(OWNERS), contents(600), forgotten),
    min_size=4,
    max_size=30,
)

# Entries whose times are equal: every current entry's time becomes the same, so the cut falls
# inside a tie, and the order among them is the key's (S6: newest first, then by key): Neo4j
# cuts the tie in its order of the keys, and `Reachable.closed` checks it against Python's.
TIE = """
MATCH (s:Session {id: $session})-[:HAS_ENTRY]->(en:Entry)-[:CURRENT]->(c:Change)
SET c.at = 1700000000000, en.updatedAt = 1700000000000
WITH count(*) AS done
MATCH (:Agent {id: $agent})-[:HAS_MEMORY]->(e:AgentEntry)
SET e.updatedAt = 1700000000000
"""


ASCENDING_SESSION = [(n, "Fact " + "x" * 150, False) for n in range(10, 30)]
ASCENDING_AGENT = [(f"a{n:02d}", None, "Habit " + "y" * 300, False) for n in range(12)]


@pytest.fixture(scope="module")
def small(neo4j_target: Target, openai_stub: OpenAIStub) -> Iterator[RunningServer]:
    """A server whose instruction budget is small enough that most examples cut it."""
    running = RunningServer(
        conftest.test_settings(openai_stub, neo4j_target, max_length=BUDGET), neo4j_target
    )
    yield running
    running.stop()


def fill(
    ana: Api,
    platform: Api,
    session: str,
    agent: str,
    session_entries: list[tuple[int, str, bool]],
    agent_entries: list[tuple[str, str | None, str, bool]],
) -> None:
    """Remember each entry (a session's as its person, the agent's through the service token,
    shared or private to its owner), then forget those marked so."""
    for n, content, forget_it in session_entries:
        key = f"s{n}"
        ana.remember(session, key, content)
        if forget_it:
            ana.ok(ana.command(session, {"_tag": "Forget", "key": key}))
    for key, owner, content, forget_it in agent_entries:
        private = {} if owner is None else {"visibility": "private", "about": owner}
        platform.ok(agent_command(platform, agent, remember(key, content, **private)))
        if forget_it:
            about = {} if owner is None else {"about": owner}
            platform.ok(agent_command(platform, agent, forget(key, **about)))


def derived(ana: Api, session: str, agent: str) -> dict[str, Any]:
    """GET instructions as the full views derive it: every session entry, and every agent
    entry ana sees (A9), through the one rule (`compose`)."""
    memory = ana.view(session)["memory"]
    seen = agent_memory(ana, agent)["entries"]

    def entries(found: dict[str, Any]) -> list[Entry]:
        return [
            Entry(key, e["content"], e["kind"], (), e["updatedAt"], e["status"])
            for key, e in found.items()
        ]

    shown = compose(entries(memory["entries"]), entries(seen), BUDGET, shared_agent=True)
    return {
        "memory": shown.text,
        "included": {"session": list(shown.keys), "agent": list(shown.agent_keys)},
    }


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(session_entries=session_entries, agent_entries=agent_entries, tie=st.booleans())
# One side alone, so it has the whole budget and shows several entries: cut (the budget holds
# about 7 of 20 or 4 of 12); and cut inside a tie, its entries written in the order of their
# keys and the other way round (the database keeps a tie in an order of its own).
@example(session_entries=ASCENDING_SESSION, agent_entries=[], tie=False)
@example(session_entries=[], agent_entries=ASCENDING_AGENT, tie=False)
@example(session_entries=ASCENDING_SESSION, agent_entries=[], tie=True)
@example(session_entries=ASCENDING_SESSION[::-1], agent_entries=[], tie=True)
@example(session_entries=[], agent_entries=ASCENDING_AGENT, tie=True)
@example(session_entries=[], agent_entries=ASCENDING_AGENT[::-1], tie=True)
def test_what_a_turn_is_shown_equals_what_the_full_views_derive(
    small: RunningServer,
    neo4j_target: Target,
    graph: Graph,
    session_entries: list[tuple[int, str, bool]],
    agent_entries: list[tuple[str, str | None, str, bool]],
    tie: bool,
) -> None:
    # S5, S6, A8, A9
    ana = Api(small.url, make_token(neo4j_target, "acme", "ana"))
    platform = Api(small.url, make_token(neo4j_target, "acme", None, service="platform"))
    make_token(neo4j_target, "acme", "ben")  # ben is a member too
    agent = ana.agent(shared=True)["id"]
    session = ana.session(agent)["session"]["id"]
    ana.ok(ana.command(session, {"_tag": "Configure", "generate": False}))  # nothing learns
    fill(ana, platform, session, agent, session_entries, agent_entries)
    if tie:
        graph.rows(TIE, session=session, agent=agent)

    expected = derived(ana, session, agent)
    path = f"/v1/sessions/{session}/instructions"
    assert ana.ok(ana.get(path)) == expected
    assert platform.ok(platform.get(path)) == expected  # the session's person's view
    turn = ana.turn(session, user("What do you remember?"))["turn"]
    assert turn["shown"] == expected["included"]["session"]
    assert turn["shownAgent"] == expected["included"]["agent"]
    ana.http.close()
    platform.http.close()


def test_a_cut_inside_a_tie_reads_the_keys_of_the_tie_past_it(
    small: RunningServer, neo4j_target: Target, graph: Graph
) -> None:
    # S6, A8: a tie is cut where the budget is, not read whole (every entry of
    # a learning job or a promote has the same time), and the keys past the cut come along
    ana = Api(small.url, make_token(neo4j_target, "acme", "ana"))
    agent = ana.agent()["id"]
    session = ana.session(agent)["session"]["id"]
    ana.ok(ana.command(session, {"_tag": "Configure", "generate": False}))
    fill(ana, ana, session, agent, ASCENDING_SESSION[::-1], [])
    graph.rows(TIE, session=session, agent=agent)
    keys = [f"s{n}" for n in range(10, 30)]  # in Python's order of the tie

    def read(whole_ties: bool) -> dict[str, Any]:
        [row] = graph.rows(statement("instruction_entries"), org="acme", person="ana",
                           id=session, reach=BUDGET, wholeTies=whole_ties)
        return row

    cut = read(False)
    read_keys = [e["key"] for e in cut["sessionNewest"]]
    # 155 characters each: the contents before the 11th hold the budget of 1,500
    assert read_keys == keys[:10]
    assert cut["sessionTied"] == keys[10:]
    whole = read(True)
    assert [e["key"] for e in whole["sessionNewest"]] == keys
    assert whole["sessionTied"] == []
    # what the turn is shown is what the full views derive
    expected = derived(ana, session, agent)
    assert ana.ok(ana.get(f"/v1/sessions/{session}/instructions")) == expected
    ana.http.close()


def entry(key: str, at: int) -> Entry:
    return Entry(key, "Fact.", Kind.FACT, (), at, Status.ACTIVE)


def reach(session: list[Entry], tied: tuple[str, ...]) -> Reachable:
    return Reachable("acme", "ana", True, False, tuple(session), (), tied, ())


def test_a_cut_tie_is_closed_only_when_no_key_past_it_comes_first_in_pythons_order() -> None:
    # S6: newest first, then by key; a cut inside a tie read in Neo4j's order of the keys
    assert reach([entry("b", 2), entry("c", 1), entry("d", 1)], ("e", "f")).closed
    assert reach([entry("b", 2), entry("d", 1), entry("c", 1)], ("e",)).closed  # any order read
    assert not reach([entry("b", 2), entry("c", 1), entry("e", 1)], ("d",)).closed
    # a key past the cut with a character outside the BMP: Java's UTF-16 order would put
    # "\U0001f600" before "\ue000", Python's code points after it
    assert not reach([entry("\U0001f600", 1)], ("\ue000",)).closed
    assert reach([entry("\ue000", 1)], ("\U0001f600",)).closed
    assert reach([entry("b", 2)], ()).closed  # no cut inside a tie
