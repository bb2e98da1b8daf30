"""Search sees exactly what the caller may read, as a property: random session and
agent memory commands by ana, ben and the service token on one shared agent (the operations of
the privacy test, plus session edits); then each caller's search hits are exactly the entries
their own read paths show (session views and the agent memory view), and no member's search
ever shows another member's private entry or session."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.api.test_agent_memory import agent_command, agent_memory, forget, remember
from tests.conftest import Api

PEOPLE = ("ana", "ben")


@dataclass(frozen=True)
class Op:
    actor: str  # ana | ben | platform
    target: str  # session | agent
    action: str  # remember | forget
    slot: int
    private: bool
    about: str  # whose session (for the platform), whom a private entry is about


ops_strategy = st.lists(
    st.builds(
        Op,
        actor=st.sampled_from(["ana", "ben", "platform"]),
        target=st.sampled_from(["session", "agent"]),
        action=st.sampled_from(["remember", "remember", "forget"]),
        slot=st.integers(0, 2),
        private=st.booleans(),
        about=st.sampled_from(PEOPLE),
    ),
    min_size=1,
    max_size=10,
)


def apply(clients: dict[str, Api], sessions: dict[str, str], agent: str, word: str,
          op: Op, n: int) -> None:
    client = clients[op.actor]
    key = f"k{op.slot}"
    owner = op.about if op.actor == "platform" else op.actor
    content = f"{word} {op.actor} wrote {op.target} {n} for {owner}"
    if op.target == "session":
        sid = sessions[owner]
        if op.action == "remember":
            client.remember(sid, key, content)
        else:
            client.command(sid, {"_tag": "Forget", "key": key})  # 409 for an unknown key
        return
    fields: dict[str, Any] = {}
    if op.private:
        fields = {"about": owner, "visibility": "private"}
    if op.action == "remember":
        client.ok(agent_command(client, agent, remember(key, content, "preference", **fields)))
    else:
        about = {"about": owner} if op.private else {}  # `about` names a private entry
        agent_command(client, agent, forget(key, **about))  # 409 for an unknown key is fine


def readable(client: Api, sessions: list[str], agent: str, word: str) -> set[tuple[Any, ...]]:
    """What the caller's read paths show that holds `word`: session and agent entries."""
    shown: set[tuple[Any, ...]] = set()
    for sid in sessions:
        response = client.get(f"/v1/sessions/{sid}")
        if response.status_code == 404:
            continue
        for entry in client.ok(response)["memory"]["entries"].values():
            if word in entry["content"]:
                shown.add(("session", sid, entry["key"], entry["content"], entry["status"]))
    for entry in agent_memory(client, agent)["entries"].values():
        if word in entry["content"]:
            shown.add(("agent", agent, entry["key"], entry["content"], entry["status"]))
    return shown


def found(client: Api, word: str, agent: str) -> list[tuple[Any, ...]]:
    body = client.ok(client.get("/v1/search", params={"q": word, "agent": agent, "limit": 100}))
    hits: list[tuple[Any, ...]] = []
    for hit in body["hits"]:
        entry = hit["entry"]
        source = ("session", entry["session"]) if "session" in entry else ("agent", entry["agent"])
        hits.append((*source, entry["key"], entry["content"], entry["status"]))
    return hits


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    database=None,
)
@given(ops=ops_strategy)
def test_search_finds_exactly_what_each_caller_may_read(
    api: Api, member: Api, platform: Api, ops: list[Op]
) -> None:
    # Fixtures are per test, not per example: each example has an agent and a word of its own.
    word = "w" + uuid.uuid4().hex[:10]
    clients = {"ana": api, "ben": member, "platform": platform}
    agent = api.agent(f"shared {word}", shared=True)["id"]
    sessions = {"ana": api.session(agent)["session"]["id"],
                "ben": member.session(agent)["session"]["id"]}
    for n, op in enumerate(ops):
        apply(clients, sessions, agent, word, op, n)

    for name, client in clients.items():
        hits = found(client, word, agent)
        assert len(hits) == len(set(hits)), hits  # one hit per entry
        assert set(hits) == readable(client, list(sessions.values()), agent, word), name
    for person, other in (("ana", "ben"), ("ben", "ana")):
        for hit in found(clients[person], word, agent):
            assert f"for {other}" not in hit[3] or hit[0] == "agent", hit
            assert hit[1] != sessions[other], hit
