"""Who sees what (SPEC A9, section 6).

(a) A person reaches only their own sessions: another member's session is 404 on every REST
route, null in GraphQL, and left out of every list; the org's service token reaches them all.
(b) A property test: random Remember/Forget by two members and the service token on one
shared agent; then no read path ever shows a member another member's private entries, their
keys or their contents.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.routing import Route

from app.store.database import Target
from tests.api.test_agent_memory import (
    agent_memory,
    assert_error,
    forget,
    instructions,
    post_agent,
    remember,
)
from tests.conftest import Api, Graph, RunningServer, flat, user
from tests.conftest import test_settings as settings_for
from tests.openai_stub import OpenAIStub

Body = dict[str, Any]


@pytest.fixture(scope="module")
def server(neo4j_target: Target, openai_stub: OpenAIStub) -> Iterator[RunningServer]:
    """This module's server: its walker asks for every field nested to the depth limit, an
    operation far over the default GraphQL cost and token limits (an estimate: the graph is
    small)."""
    running = RunningServer(
        settings_for(
            openai_stub, neo4j_target, graphql_max_cost=10**12, graphql_max_tokens=10**6
        ),
        neo4j_target,
    )
    yield running
    running.stop()

SECRET = "ANA-PRIVATE-8812"  # in every text of ana's own session


# --- (a) sessions per person ---------------------------------------------------------------


@dataclass(frozen=True)
class World:
    """Ana's objects on a shared agent, and Ben's own session on it."""

    agent: str
    session: str
    subagent: str
    fork: str
    turn: str
    run: str
    head: str
    revision: int
    first_version: str
    bens: str


@pytest.fixture
def world(api: Api, member: Api) -> World:
    agent = api.agent("shared planner", shared=True)["id"]
    sid = api.session(agent)["session"]["id"]
    first_version = api.view(sid)["session"]["head"]
    answer = api.turn(sid, user(f"Hello, I am Ana. {SECRET}", id="i-01"),
                      user(f"My budget is 1500 EUR. {SECRET}", id="i-02"))
    api.wait_idle(sid)
    api.remember(sid, "budget", f"The trip budget is 1500 EUR. {SECRET}")
    api.remember(sid, "notes", f"Notes of {SECRET}.")
    api.ok(api.command(sid, {"_tag": "Forget", "key": "notes"}))
    subagent = api.session(agent, kind="subagent", parent=sid)["session"]["id"]
    fork = api.ok(api.post(f"/v1/sessions/{sid}/fork", {}), 201)["session"]["id"]
    bens = member.session(agent)["session"]["id"]
    member.remember(bens, "budget", "Ben's budget is 300 EUR.")
    view = api.view(sid)
    return World(
        agent=agent,
        session=sid,
        subagent=subagent,
        fork=fork,
        turn=answer["turn"]["id"],
        run=api.wait_idle(sid)[-1]["id"],
        head=view["session"]["head"],
        revision=view["session"]["revision"],
        first_version=first_version,
        bens=bens,
    )


def state(api: Api, graph: Graph, world: World) -> Any:
    """Everything of ana's that a call by ben could change."""
    views = [api.view(sid) for sid in (world.session, world.subagent, world.fork)]
    [row] = graph.rows(
        "RETURN COUNT { (:Change) } AS changes, COUNT { (:Item) } AS items, "
        "COUNT { (:Version) } AS versions, COUNT { (:Run) } AS runs, "
        "COUNT { (:Session) } AS sessions, COUNT { (:Turn) } AS turns, "
        "COUNT { (:AgentChange) } AS agent_changes"
    )
    return views, row


def assert_not_found(response: httpx.Response) -> None:
    assert response.status_code == 404, (response.request.method, response.request.url,
                                         response.text)
    assert response.json()["_tag"] == "NotFound", response.text
    assert SECRET not in response.text


def session_bodies(path: str, world: World) -> list[Any]:
    """Valid bodies for a session route's POST: only the caller is wrong with them."""
    expected = {"expected": world.head, "revision": world.revision}
    known: dict[str, list[Any]] = {
        "/v1/sessions/{id}/memory": [
            {**expected, "command": command}
            for command in (
                {"_tag": "Remember", "key": "budget", "content": "Stolen.", "kind": "fact"},
                {"_tag": "Forget", "key": "budget"},
                {"_tag": "Configure", "use": False, "generate": False},
                {"_tag": "Refresh"},
            )
        ],
        "/v1/sessions/{id}/turns": [{"items": [user("Hi.")]}],
        "/v1/sessions/{id}/turns/{turn}/complete": [{"items": []}],
        "/v1/sessions/{id}/fork": [{}, {"at": world.first_version}],
        "/v1/sessions/{id}/revert": [{**expected, "to": world.first_version}],
    }
    return known.get(path, [{}])


def session_calls(server: RunningServer, world: World) -> Iterator[tuple[str, str, Any]]:
    """Every REST route under /v1/sessions/{id}, served now, filled with ana's ids."""
    fills = {"id": world.session, "turn": world.turn, "version": world.first_version,
             "run": world.run}
    for route in server.app.routes:
        if not isinstance(route, Route) or not route.path.startswith("/v1/sessions/{id}"):
            continue
        path = route.path.format(**fills)
        for method in sorted(route.methods or ()):
            if method == "HEAD":
                continue
            if method == "GET":
                yield method, path, None
            else:
                for body in session_bodies(route.path, world):
                    yield method, path, body


def test_another_members_session_is_404_on_every_rest_route_and_changes_nothing(
    api: Api, member: Api, graph: Graph, server: RunningServer, world: World
) -> None:
    # Section 6: a person reaches only sessions whose person is them.
    before = state(api, graph, world)
    calls = list(session_calls(server, world))
    sid = world.session
    # The walk covers every route the contract names, whatever else is added later.
    assert {(m, p) for m, p, _ in calls} >= {
        ("GET", f"/v1/sessions/{sid}"),
        ("GET", f"/v1/sessions/{sid}/memory"),
        ("POST", f"/v1/sessions/{sid}/memory"),
        ("POST", f"/v1/sessions/{sid}/turns"),
        ("GET", f"/v1/sessions/{sid}/turns/{world.turn}"),
        ("POST", f"/v1/sessions/{sid}/turns/{world.turn}/complete"),
        ("GET", f"/v1/sessions/{sid}/instructions"),
        ("GET", f"/v1/sessions/{sid}/runs"),
        ("POST", f"/v1/sessions/{sid}/fork"),
        ("POST", f"/v1/sessions/{sid}/revert"),
        ("GET", f"/v1/sessions/{sid}/versions"),
        ("GET", f"/v1/sessions/{sid}/versions/{world.first_version}"),
    }
    for method, path, body in calls:
        assert_not_found(member.http.request(method, path, json=body))
    for other in (world.subagent, world.fork):  # ana's other sessions too
        for tail in ("", "/memory", "/instructions", "/versions", "/runs"):
            assert_not_found(member.get(f"/v1/sessions/{other}{tail}"))
    # Ben cannot hang a subagent session of his own under ana's session either.
    assert_not_found(member.post("/v1/sessions", {"agent": world.agent, "kind": "subagent",
                                                  "parent": sid}))
    assert state(api, graph, world) == before
    # Ben's own session is his to use.
    assert member.view(world.bens)["memory"]["entries"]["budget"]["content"] == (
        "Ben's budget is 300 EUR.")


def test_lists_leave_another_members_sessions_out(
    api: Api, member: Api, world: World
) -> None:
    theirs = member.ok(member.get("/v1/sessions", params={"limit": 200}))["sessions"]
    assert [view["session"]["id"] for view in theirs] == [world.bens]  # section 6
    by_agent = member.ok(member.get("/v1/sessions", params={"agent": world.agent}))["sessions"]
    assert [view["session"]["id"] for view in by_agent] == [world.bens]
    assert SECRET not in json.dumps(theirs) + json.dumps(by_agent)
    mine = api.ok(api.get("/v1/sessions", params={"limit": 200}))["sessions"]
    assert {view["session"]["id"] for view in mine} == {world.session, world.subagent,
                                                        world.fork}


SESSION_ROOTS = """
query($s: ID!, $sub: ID!, $fork: ID!, $a: ID!, $agent: String!) {
  session(id: $s) { id memory { entries { nodes { key content } } } items { nodes { id content } } }
  sub: session(id: $sub) { id }
  forked: session(id: $fork) { id }
  sessions(first: 200) { nodes { id person } }
  byAgent: sessions(agent: $agent) { nodes { id } }
  agent(id: $a) { id sessions { nodes { id person memory { entries { nodes { key content } } } } } }
  agents(first: 200) { nodes { id sessions { nodes { id } } } }
}
"""


def test_graphql_shows_another_members_session_as_null_and_lists_leave_it_out(
    api: Api, member: Api, world: World
) -> None:
    answer = flat(member.graphql(SESSION_ROOTS, s=world.session, sub=world.subagent,
                            fork=world.fork, a=world.agent, agent=world.agent))
    assert "errors" not in answer, answer
    data = answer["data"]
    assert (data["session"], data["sub"], data["forked"]) == (None, None, None)  # section 6
    assert data["sessions"] == [{"id": world.bens, "person": "ben"}]
    assert data["byAgent"] == [{"id": world.bens}]
    assert [s["id"] for s in data["agent"]["sessions"]] == [world.bens]
    assert [s["id"] for a in data["agents"] for s in a["sessions"]] == [world.bens]
    text = json.dumps(answer)
    assert SECRET not in text
    for ana_id in (world.session, world.subagent, world.fork, world.turn, world.head):
        assert ana_id not in text
    # Ana's own answer has them (so the query would show a leak).
    mine = flat(api.graphql(SESSION_ROOTS, s=world.session, sub=world.subagent, fork=world.fork,
                       a=world.agent, agent=world.agent))["data"]
    assert mine["session"]["id"] == world.session
    assert {s["id"] for s in mine["agent"]["sessions"]} == {world.session, world.subagent,
                                                            world.fork}


INTROSPECTION = """
query {
  __schema {
    types {
      name kind
      fields { name args { name defaultValue type { ...Ref } } type { ...Ref } }
    }
  }
}
fragment Ref on __Type { kind name ofType { kind name ofType { kind name ofType { kind name } } } }
"""


def named(ref: Body) -> tuple[str, bool]:
    """The named type under NON_NULL/LIST wrappers, and whether the outer one is NON_NULL."""
    required = ref["kind"] == "NON_NULL"
    while ref.get("ofType"):
        ref = ref["ofType"]
    return ref["name"], required


def selection(types: dict[str, Body], type_name: str, path: tuple[str, ...] = ()) -> str:
    """Every field reachable from a type, each object type once per path; fields with a
    required argument are left out except `entry(key)`."""
    parts: list[str] = []
    for field_ in types[type_name]["fields"]:
        args = ""
        if any(named(a["type"])[1] and a["defaultValue"] is None for a in field_["args"]):
            if field_["name"] != "entry":
                continue
            args = '(key: "budget")'
        target, _ = named(field_["type"])
        page = connection_node(types, target)
        if types[target]["kind"] != "OBJECT":
            parts.append(field_["name"] + args)
        elif page is not None and page not in path and len(path) < 9:
            inner = selection(types, page, (*path, type_name, target))
            parts.append(f"{field_['name']}{args} {{ nodes {{ {inner} }} }}")
        elif page is None and target not in path and len(path) < 9:
            inner = selection(types, target, (*path, type_name))
            parts.append(f"{field_['name']}{args} {{ {inner} }}")
    return " ".join(parts) or "__typename"


def connection_node(types: dict[str, Body], name: str) -> str | None:
    """The node type of a connection (walked through its `nodes`: its edges hold the same nodes
    with cursors of their own keys); None for any other type."""
    fields = {f["name"]: f for f in types[name].get("fields") or []}
    if "pageInfo" not in fields:
        return None
    return named(fields["nodes"]["type"])[0]


def test_no_nested_graphql_field_reaches_another_members_session(
    api: Api, member: Api, world: World
) -> None:
    schema = flat(member.graphql(INTROSPECTION))["data"]["__schema"]
    types = {t["name"]: t for t in schema["types"]}
    query = (
        f"query {{ sessions(first: 200) {{ nodes {{ "
        f"{selection(types, 'Session', ('Query',))} }} }} "
        f"agents(first: 200) {{ nodes {{ {selection(types, 'Agent', ('Query',))} }} }} }}"
    )
    theirs = flat(member.graphql(query))
    assert "errors" not in theirs, theirs["errors"]
    text = json.dumps(theirs)
    assert SECRET not in text  # section 6: not through any nested field
    for ana_id in (world.session, world.subagent, world.fork, world.turn, world.head):
        assert ana_id not in text
    assert world.bens in text
    ours = json.dumps(flat(api.graphql(query)))
    assert SECRET in ours
    assert world.session in ours


def test_graphql_mutations_on_another_members_session_are_not_found(
    api: Api, member: Api, graph: Graph, world: World
) -> None:
    before = state(api, graph, world)
    s, e, r = json.dumps(world.session), json.dumps(world.head), world.revision
    to = json.dumps(world.first_version)
    documents = {
        "remember": f'remember(sessionId: {s}, expected: {e}, revision: {r}, key: "budget", '
                    'content: "Stolen.", kind: FACT)',
        "forget": f'forget(sessionId: {s}, expected: {e}, revision: {r}, key: "budget")',
        "configure": f"configure(sessionId: {s}, expected: {e}, revision: {r}, use: false)",
        "refresh": f"refresh(sessionId: {s}, expected: {e}, revision: {r})",
        "fork": f"fork(sessionId: {s})",
        "revert": f"revert(sessionId: {s}, expected: {e}, revision: {r}, to: {to})",
    }
    for name, call in documents.items():
        answer = flat(member.graphql(f"mutation {{ {call} {{ id head }} }}"))
        assert answer.get("data") is None, (name, answer)
        [error] = answer["errors"]
        assert error["extensions"]["code"] == "NOT_FOUND", (name, error)  # section 6
        assert SECRET not in json.dumps(answer)
    assert state(api, graph, world) == before


def test_the_service_token_reaches_every_session_of_its_org(
    api: Api, platform: Api, world: World
) -> None:
    # Section 6: a service token reaches all sessions of its org.
    listed = platform.ok(platform.get("/v1/sessions", params={"limit": 200}))["sessions"]
    assert {view["session"]["id"] for view in listed} == {
        world.session, world.subagent, world.fork, world.bens
    }
    sid = world.session
    for path in (f"/v1/sessions/{sid}", f"/v1/sessions/{sid}/memory",
                 f"/v1/sessions/{sid}/turns/{world.turn}", f"/v1/sessions/{sid}/instructions",
                 f"/v1/sessions/{sid}/runs", f"/v1/sessions/{sid}/versions",
                 f"/v1/sessions/{sid}/versions/{world.first_version}",
                 f"/v1/sessions/{world.bens}"):
        platform.ok(platform.get(path))
    assert platform.view(sid) == api.view(sid)
    changed = platform.remember(sid, "hotel", "The hotel is near the station.")
    assert set(changed["memory"]["entries"]) == {"budget", "notes", "hotel"}
    assert api.view(sid) == changed
    data = flat(platform.graphql(SESSION_ROOTS, s=sid, sub=world.subagent, fork=world.fork,
                            a=world.agent, agent=world.agent))["data"]
    assert data["session"]["id"] == sid
    assert data["sub"] == {"id": world.subagent}
    assert {s["id"] for s in data["sessions"]} == {world.session, world.subagent, world.fork,
                                                   world.bens}
    assert {s["id"] for s in data["agent"]["sessions"]} == {world.session, world.subagent,
                                                            world.fork, world.bens}


def test_who_a_new_session_is_for(api: Api, member: Api, platform: Api, graph: Graph) -> None:
    # Section 6: a person names only themself; a service token must name a person.
    agent = api.agent("shared planner", shared=True)["id"]
    mine = api.ok(api.post("/v1/sessions", {"agent": agent, "person": "ana"}), 201)
    assert mine["session"]["person"] == "ana"
    assert api.session(agent)["session"]["person"] == "ana"
    assert member.session(agent)["session"]["person"] == "ben"
    sessions = int(graph.value("MATCH (s:Session) RETURN count(s)"))
    assert_error(api.post("/v1/sessions", {"agent": agent, "person": "ben"}), 403, "Forbidden")
    assert_error(platform.post("/v1/sessions", {"agent": agent}), 400, "ValidationError",
                 "person")
    assert_error(platform.post("/v1/sessions", {"agent": agent, "person": "zoe"}), 404,
                 "NotFound")
    assert int(graph.value("MATCH (s:Session) RETURN count(s)")) == sessions
    for_ben = platform.ok(platform.post("/v1/sessions", {"agent": agent, "person": "ben"}), 201)
    bens = for_ben["session"]["id"]
    assert for_ben["session"]["person"] == "ben"
    assert member.view(bens)["session"]["id"] == bens
    assert_not_found(api.get(f"/v1/sessions/{bens}"))


# --- (b) A9 as a property ------------------------------------------------------------------

PEOPLE = ("ana", "ben")
ACTORS = ("ana", "ben", "platform")


@dataclass(frozen=True)
class Op:
    """One command: who sends it, what, on which key slot, shared or private, about whom."""

    actor: str
    action: str  # remember | forget
    slot: int  # 0, 1: keys that shared and private entries share; 2: the owner's own key
    private: bool
    about: str | None


ops_strategy = st.lists(
    st.builds(
        Op,
        actor=st.sampled_from(ACTORS),
        action=st.sampled_from(["remember", "remember", "forget"]),
        slot=st.integers(0, 2),
        private=st.booleans(),
        about=st.sampled_from([None, "ana", "ben"]),
    ),
    min_size=1,
    max_size=12,
)


@dataclass
class Entry:
    content: str
    status: str
    about: str | None


@dataclass
class Model:
    """What the agent memory must hold: entries by (key, owner); owner None is shared."""

    prefix: str
    entries: dict[tuple[str, str | None], Entry] = field(default_factory=dict)
    log: list[tuple[int, str, str | None]] = field(default_factory=list)  # version, key, owner
    written: int = 0

    @property
    def version(self) -> int:
        return len(self.log)

    def key(self, op: Op, owner: str | None) -> str:
        if op.slot < 2 or owner is None:
            return f"{self.prefix}-s{op.slot}"
        return f"{self.prefix}-only-{owner}"

    def content(self, owner: str | None) -> str:
        self.written += 1
        if owner is None:
            return f"{self.prefix}-shared-{self.written}"
        return f"{self.prefix}-secret-{owner}-{self.written}"

    def view_for(self, person: str | None) -> dict[str, tuple[tuple[str, str | None], Entry]]:
        """The view's entries by their view key, with their (key, owner): a shared one under
        its key, a private one under `key@owner`, for every reader who may see it."""
        return {
            listed(key, owner): ((key, owner), entry)
            for (key, owner), entry in self.entries.items()
            if owner is None or person in (None, owner)
        }

    def versions_for(self, person: str | None) -> list[tuple[int, str]]:
        return [(v, listed(key, owner)) for v, key, owner in self.log
                if person is None or owner in (None, person)]


def listed(key: str, owner: str | None) -> str:
    """The name an entry is listed under in every view and the log (SPEC section 6)."""
    return key if owner is None else f"{key}@{owner}"


def secrets_of(model: Model, person: str) -> list[str]:
    """Strings that only `person`'s private entries hold: their content marker and own key."""
    return [f"{model.prefix}-secret-{person}-", f"{model.prefix}-only-{person}"]


class Reader:
    """A client that keeps the raw text of every answer it got, to search it afterwards."""

    def __init__(self, client: Api) -> None:
        self.client = client
        self.seen: list[str] = []

    def keep(self, response: httpx.Response) -> httpx.Response:
        self.seen.append(response.text)
        return response

    def get(self, path: str, **kwargs: Any) -> Any:
        return self.client.ok(self.keep(self.client.get(path, **kwargs)))

    def graphql(self, query: str, **variables: Any) -> Any:
        response = self.client.post("/graphql", {"query": query, "variables": variables})
        self.keep(response)
        assert response.status_code == 200, response.text
        answer = response.json()
        assert "errors" not in answer, answer
        return answer["data"]


def apply(model: Model, reader: Reader, agent: str, op: Op) -> None:
    """Send `op` as `op.actor` and check the answer against the model; update the model."""
    person = None if op.actor == "platform" else op.actor
    if op.action == "remember":
        if op.private:
            owner = op.about if op.about is not None else person
            fields: Body = {"visibility": "private"}
            if owner is not None:
                fields["about"] = owner
        else:
            owner = None
            fields = {} if op.about is None else {"about": op.about}
        key = model.key(op, owner)
        content = model.content(owner)
        command = remember(key, content, "preference", **fields)
        if op.private and owner is None:
            refused = ("command.visibility", 400)
        elif op.private and person is not None and owner != person:
            refused = ("command.about", 400)  # a person's private entry is about themself
        else:
            refused = None
        response = reader.keep(post_agent(reader.client, agent, model.version, command))
        if refused is not None:
            assert_error(response, refused[1], "ValidationError", refused[0])
            return
        assert response.status_code == 200, (op, response.text)
        model.entries[(key, owner)] = Entry(content, "active",
                                            owner if owner is not None else op.about)
        model.log.append((model.version + 1, key, owner))
    else:
        if person is not None:  # `about` names the caller's private entry; none the shared one
            owner = person if op.private else None
            key = model.key(op, owner)
            target: tuple[str, str | None] | None = (
                (key, owner) if (key, owner) in model.entries else None)
            command = forget(key) if owner is None else forget(key, about=owner)
        else:
            owner = op.about if op.private else None
            key = model.key(op, owner)
            target = (key, owner) if (key, owner) in model.entries else None
            command = forget(key) if owner is None else forget(key, about=owner)
        response = reader.keep(post_agent(reader.client, agent, model.version, command))
        if target is None:
            assert_error(response, 409, "AgentConflict")  # unknown, or not the caller's to see
            return
        assert response.status_code == 200, (op, response.text)
        if model.entries[target].status != "retracted":  # else it changes nothing (A10)
            model.entries[target].status = "retracted"
            model.log.append((model.version + 1, key, target[1]))
    answer = response.json()
    assert answer["version"] == model.version
    check_entries(answer["entries"], model, person)


def check_entries(entries: Body, model: Model, person: str | None) -> None:
    """A REST view's entries are exactly the model's view for `person` (None: the service)."""
    expected = model.view_for(person)
    assert set(entries) == set(expected), (person, entries, model)
    for view_key, ((key, owner), entry) in expected.items():
        got = entries[view_key]
        assert got["key"] == key
        assert (got["content"], got["status"], got["about"], got["visibility"]) == (
            entry.content, entry.status, entry.about, "shared" if owner is None else "private"
        ), (person, view_key, got)
        assert got["sources"] == []


AGENT_QUERY = """
query($a: ID!, $s: ID!) {
  agent(id: $a) {
    id
    memory {
      version
      entries { nodes {
        key content kind status about visibility updatedAt
        sources { session { id } item { id content } }
        changes { nodes { version maker person before content at } }
      } }
      log(first: 200) { nodes { version maker person keys at } }
    }
    sessions { nodes { id person } }
  }
  session(id: $s) { id instructions { memory sessionKeys agentKeys } }
}
"""


def check_reads(model: Model, reader: Reader, agent: str, person: str | None,
                sessions: dict[str, str]) -> None:
    """Every read path of the agent memory for `person` (None: the service token)."""
    view = reader.get(f"/v1/agents/{agent}/memory")
    assert view["version"] == model.version  # everyone sees the one version number
    check_entries(view["entries"], model, person)

    log = reader.get(f"/v1/agents/{agent}/memory/log", params={"limit": 200})["changes"]
    expected_log = model.versions_for(person)
    assert [c["version"] for c in log] == [v for v, _ in expected_log], (person, log)
    for change, (_, name) in zip(log, expected_log, strict=True):
        assert change["keys"] == [name]  # a private entry as key@person, for every reader

    visible = model.view_for(person)
    for owner, sid in sessions.items():
        if person is not None and owner != person:
            continue
        # The agent part holds what the SESSION's person may see, also when the service asks.
        shown = reader.get(f"/v1/sessions/{sid}/instructions")
        may = model.view_for(owner)
        active = {k for k, (_, e) in may.items() if e.status == "active"}
        assert set(shown["included"]["agent"]) == active, (owner, shown)  # A8: all fit
        for key in active:
            assert may[key][1].content in shown["memory"]
        data = flat(reader.graphql(AGENT_QUERY, a=agent, s=sid))
        assert set(data["session"]["instructions"]["agentKeys"]) == set(
            shown["included"]["agent"])

    data = flat(reader.graphql(AGENT_QUERY, a=agent, s=sessions[person or "ana"]))
    memory = data["agent"]["memory"]
    assert memory["version"] == model.version
    got = {(e["key"], e["about"] if e["visibility"] == "PRIVATE" else None):
           (e["content"], e["status"]) for e in memory["entries"]}
    # GraphQL names the model's (REST's) words through the enums.
    assert got == {kv: (e.content, e.status.upper()) for kv, e in visible.values()}, (
        person, got)
    assert len(memory["entries"]) == len(visible)
    assert [c["version"] for c in memory["log"]] == [v for v, _ in expected_log]
    for entry in memory["entries"]:
        assert entry["sources"] == []  # A3: a person's or the service's Remember cites nothing


@pytest.fixture
def readers(api: Api, member: Api, platform: Api) -> dict[str, Reader]:
    return {"ana": Reader(api), "ben": Reader(member), "platform": Reader(platform)}


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    database=None,
)
@given(ops=ops_strategy)
def test_no_member_ever_sees_another_members_private_entries(
    readers: dict[str, Reader], ops: list[Op]
) -> None:
    # A9: one memory for all members; in person P's reads, shared entries and P's own only.
    # Fixtures are per test, not per example: each example has an agent and keys of its own.
    for reader in readers.values():
        reader.seen = []
    prefix = uuid.uuid4().hex[:10]
    model = Model(prefix)
    ana, ben = readers["ana"].client, readers["ben"].client
    agent = ana.agent(f"shared {prefix}", shared=True)["id"]
    sessions = {
        "ana": ana.session(agent)["session"]["id"],
        "ben": ben.session(agent)["session"]["id"],
    }
    for op in ops:
        apply(model, readers[op.actor], agent, op)

    for person in PEOPLE:
        check_reads(model, readers[person], agent, person, sessions)
    check_reads(model, readers["platform"], agent, None, sessions)  # the service sees all
    assert agent_memory(readers["platform"].client, agent)["version"] == model.version

    # Nothing of one member's private entries appears anywhere in the other's answers.
    for person, other in (("ana", "ben"), ("ben", "ana")):
        text = "\n".join(readers[person].seen)
        for secret in secrets_of(model, other):
            assert secret not in text, (person, secret)
    # The platform's reads of the sessions' instructions keep each session's person's view.
    for person, other in (("ana", "ben"), ("ben", "ana")):
        shown = instructions(readers["platform"].client, sessions[person])
        for secret in secrets_of(model, other):
            assert secret not in json.dumps(shown)


def test_every_reader_sees_private_entries_keyed_by_key_at_about(
    api: Api, member: Api, platform: Api
) -> None:
    # A9 + SPEC section 6: the service's view holds every entry; a private one as
    # "<key>@<about>", in every reader's view.
    agent = api.agent("shared planner", shared=True)["id"]
    agent_memory(member, agent)
    version = 0
    for client, command in (
        (api, remember("seat", "Shared: a window seat.", "preference")),
        (api, remember("seat", "Ana: an aisle seat.", "preference", about="ana",
                       visibility="private")),
        (platform, remember("seat", "Ben: any seat.", "preference", about="ben",
                            visibility="private")),
    ):
        version = api.ok(post_agent(client, agent, version, command))["version"]
    everything = agent_memory(platform, agent)["entries"]
    assert {k: (e["key"], e["content"], e["about"]) for k, e in everything.items()} == {
        "seat": ("seat", "Shared: a window seat.", None),
        "seat@ana": ("seat", "Ana: an aisle seat.", "ana"),
        "seat@ben": ("seat", "Ben: any seat.", "ben"),
    }
    # Each person sees their own private one beside the shared one.
    anas = agent_memory(api, agent)["entries"]
    assert {k: e["content"] for k, e in anas.items()} == {
        "seat": "Shared: a window seat.", "seat@ana": "Ana: an aisle seat."}
    bens = agent_memory(member, agent)["entries"]
    assert {k: e["content"] for k, e in bens.items()} == {
        "seat": "Shared: a window seat.", "seat@ben": "Ben: any seat."}
    # The service forgets one of them by naming whom it is about; the others stay.
    after = platform.ok(post_agent(platform, agent, 3, forget("seat", about="ana")))
    assert {k: e["status"] for k, e in after["entries"].items()} == {
        "seat": "active", "seat@ana": "retracted", "seat@ben": "active"
    }
    after = platform.ok(post_agent(platform, agent, 4, forget("seat")))
    assert after["entries"]["seat"]["status"] == "retracted"
    assert after["entries"]["seat@ben"]["status"] == "active"
    # Ben forgetting "seat" about himself forgets his own private one.
    mine = member.ok(post_agent(member, agent, 5, forget("seat", about="ben")))
    assert mine["entries"]["seat@ben"]["content"] == "Ben: any seat."
    assert mine["entries"]["seat@ben"]["status"] == "retracted"
    assert "aisle" not in json.dumps(mine)
