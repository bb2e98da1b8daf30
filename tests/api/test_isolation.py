"""Tenancy (SPEC section 5): another org's object is 404 on every route, and no nested GraphQL
field ever reaches into another org.

Both orgs hold look-alike data on purpose (the same item ids, the same memory keys), each
marked with its org's word, so a lookup that forgets the org shows up as the other's word.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from starlette.routing import Route

from app.api.rest import routes
from app.store.database import Target
from tests.conftest import Api, Graph, RunningServer, flat, make_token, user
from tests.conftest import test_settings as settings_for
from tests.openai_stub import OpenAIStub


@pytest.fixture(scope="module")
def server(neo4j_target: Target, openai_stub: OpenAIStub) -> Iterator[RunningServer]:
    """This module's server: its walkers ask for every field nested to the depth limit, an
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


ACME = "ACME-7731"  # in every text acme writes
GLOBEX = "GLOBEX-4409"  # in every text globex writes


@dataclass(frozen=True)
class World:
    """One org's objects, made through the API."""

    agent: str
    session: str
    subagent: str
    fork: str
    turn: str
    run: str
    head: str
    revision: int
    first_version: str


def build(api: Api, word: str) -> World:
    """An agent with a session that has turns, consolidated and edited memory, a subagent
    session and a fork: every kind of object a nested read can reach."""
    agent = api.agent(f"{word} planner")["id"]
    sid = api.session(agent)["session"]["id"]
    first_version = api.view(sid)["session"]["head"]
    answer = api.turn(
        sid,
        user(f"Hello, this is {word}.", id="i-01"),
        user(f"My budget is 1500 EUR. {word}", id="i-02"),
    )
    api.wait_idle(sid)
    api.remember(sid, "budget", f"The {word} trip budget is 1500 EUR.")
    api.remember(sid, "notes", f"Notes of {word}.")
    api.ok(api.command(sid, {"_tag": "Forget", "key": "notes"}))
    subagent = api.session(agent, kind="subagent", parent=sid)["session"]["id"]
    fork = api.ok(api.post(f"/v1/sessions/{sid}/fork", {}), 201)["session"]["id"]
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
    )


@pytest.fixture
def acme(api: Api) -> World:
    return build(api, ACME)


@pytest.fixture
def globex(other_org: Api) -> World:
    return build(other_org, GLOBEX)


def state(api: Api, graph: Graph, world: World) -> Any:
    """Everything of one org that a foreign call could change."""
    views = [api.view(sid) for sid in (world.session, world.subagent, world.fork)]
    [row] = graph.rows(
        "RETURN COUNT { (:Change) } AS changes, COUNT { (:Item) } AS items, "
        "COUNT { (:Version) } AS versions, COUNT { (:Run) } AS runs, "
        "COUNT { (:Session) } AS sessions, COUNT { (:Agent) } AS agents, "
        "COUNT { (:Turn) } AS turns"
    )
    return views, row, api.ok(api.get("/v1/org/settings"))


def assert_not_found(response: httpx.Response, *secrets: str) -> None:
    assert response.status_code == 404, (response.request.method, response.request.url,
                                         response.text)
    body = response.json()
    assert body["_tag"] == "NotFound", body
    for secret in secrets:
        assert secret not in response.text


# --- REST ----------------------------------------------------------------------------------


def memory_bodies(world: World) -> list[dict[str, Any]]:
    """Valid memory commands with the session's real head and revision: the org is the only
    thing wrong with them."""
    return [
        {"expected": world.head, "revision": world.revision, "command": command}
        for command in (
            {"_tag": "Remember", "key": "budget", "content": "Stolen.", "kind": "fact"},
            {"_tag": "Forget", "key": "budget"},
            {"_tag": "Configure", "use": False, "generate": False},
            {"_tag": "Refresh"},
        )
    ]


def bodies_for(path: str, world: World) -> list[Any]:
    """Valid bodies for a route's POST; an empty object for a route this list does not know."""
    known: dict[str, list[Any]] = {
        "/v1/sessions/{id}/memory": memory_bodies(world),
        "/v1/sessions/{id}/turns": [{"items": [user("Hi.")]}],
        "/v1/sessions/{id}/turns/{turn}/complete": [{"items": []}],
        "/v1/sessions/{id}/fork": [{}, {"at": world.first_version}],
        "/v1/agents/{id}/memory": [
            {"expected": 0, "command": {"_tag": "Remember", "key": "k", "content": "c",
                                        "kind": "procedure"}},
            {"expected": 0, "command": {"_tag": "Forget", "key": "k"}},
        ],
        "/v1/sessions/{id}/revert": [
            {"expected": world.head, "revision": world.revision, "to": world.first_version}
        ],
    }
    return known.get(path, [{}])


def foreign_calls(world: World) -> Iterator[tuple[str, str, Any]]:
    """Every route of the REST surface that names an object, filled with `world`'s ids."""
    fills = {
        "id": world.session,
        "turn": world.turn,
        "version": world.first_version,
        "run": world.run,
    }
    for route in routes:
        assert isinstance(route, Route)
        if "{" not in route.path or route.path.startswith("/v1/org/"):
            continue  # a route under /v1/org/ names an object of the caller's own org only
        values = {**fills, "id": world.agent if route.path.startswith("/v1/agents/") else
                  world.session}
        path = route.path.format(**values)
        for method in sorted(route.methods or ()):
            if method == "HEAD":
                continue
            if method == "GET":
                yield method, path, None
            else:
                for body in bodies_for(route.path, world):
                    yield method, path, body


def test_every_route_with_another_orgs_id_is_404_and_changes_nothing(
    api: Api, other_org: Api, graph: Graph, acme: World, globex: World
) -> None:
    before = state(api, graph, acme)
    calls = list(foreign_calls(acme))
    # The walk covers the routes the spec names, whatever else is added later.
    paths = {path for _, path, _ in calls}
    sid = acme.session
    assert {f"/v1/agents/{acme.agent}", f"/v1/sessions/{sid}", f"/v1/sessions/{sid}/memory",
            f"/v1/sessions/{sid}/turns", f"/v1/sessions/{sid}/instructions",
            f"/v1/sessions/{sid}/fork"} <= paths
    for method, path, body in calls:
        response = other_org.http.request(method, path, json=body)
        assert_not_found(response, ACME)
    for sid in (acme.subagent, acme.fork):  # the other sessions of acme too
        assert_not_found(other_org.get(f"/v1/sessions/{sid}"), ACME)
        assert_not_found(other_org.get(f"/v1/sessions/{sid}/memory"), ACME)
    assert state(api, graph, acme) == before


def test_another_orgs_service_token_erases_no_person_of_this_org(
    server: RunningServer, neo4j_target: Target, api: Api, graph: Graph, acme: World
) -> None:
    # Erasure names a person of the caller's own org: acme's ana is no one in globex
    before = state(api, graph, acme)
    service = Api(server.url, make_token(neo4j_target, "globex", None, "ops"))
    try:
        assert_not_found(service.post("/v1/org/persons/ana/erase"), ACME)
        assert service.ok(service.get("/v1/org/erasures"))["erasures"] == []
    finally:
        service.http.close()
    assert state(api, graph, acme) == before
    assert api.ok(api.get(f"/v1/sessions/{acme.session}"))["session"]["id"] == acme.session


def test_a_person_of_the_same_name_in_another_org_sees_nothing(
    server: RunningServer, tokens: Callable[[str, str], str], acme: World
) -> None:
    namesake = Api(server.url, tokens("globex", "ana"))  # acme's ana is someone else
    try:
        assert_not_found(namesake.get(f"/v1/sessions/{acme.session}"), ACME)
        assert_not_found(namesake.get(f"/v1/agents/{acme.agent}"), ACME)
        assert namesake.ok(namesake.get("/v1/sessions"))["sessions"] == []
        assert namesake.ok(namesake.get("/v1/agents"))["agents"] == []
    finally:
        namesake.http.close()


def test_own_objects_cannot_point_at_another_orgs(
    api: Api, other_org: Api, graph: Graph, acme: World, globex: World
) -> None:
    before = state(api, graph, acme)
    own = globex.session
    calls: list[tuple[str, str, Any]] = [
        ("POST", "/v1/sessions", {"agent": acme.agent}),
        ("POST", "/v1/sessions", {"agent": globex.agent, "kind": "subagent",
                                  "parent": acme.session}),
        ("POST", f"/v1/sessions/{own}/fork", {"at": acme.head}),
        ("POST", f"/v1/sessions/{own}/fork", {"at": acme.first_version}),
        ("POST", f"/v1/sessions/{own}/revert", {"expected": globex.head,
                                                 "revision": globex.revision, "to": acme.head}),
        ("GET", f"/v1/sessions/{own}/versions/{acme.head}", None),
        ("GET", f"/v1/sessions/{own}/turns/{acme.turn}", None),
        ("POST", f"/v1/sessions/{own}/turns/{acme.turn}/complete", {"items": []}),
        ("GET", f"/v1/sessions?agent={acme.agent}", None),
    ]
    for method, path, body in calls:
        response = other_org.http.request(method, path, json=body)
        if path.startswith("/v1/sessions?agent="):
            assert other_org.ok(response) == {"sessions": []}
            continue
        assert_not_found(response, ACME)
    # A person starts sessions of their own only, whoever the other person is (403).
    response = other_org.post("/v1/sessions", {"agent": globex.agent, "person": "ana"})
    assert response.status_code == 403, response.text
    assert response.json()["_tag"] == "Forbidden"
    assert state(api, graph, acme) == before
    # globex's session is as it was too: no failed call moved it.
    view = other_org.view(own)
    assert (view["session"]["head"], view["session"]["revision"]) == (globex.head,
                                                                      globex.revision)


def test_lists_never_show_another_orgs_objects(
    api: Api, other_org: Api, acme: World, globex: World
) -> None:
    agents = other_org.ok(other_org.get("/v1/agents"))["agents"]
    assert [agent["id"] for agent in agents] == [globex.agent]
    sessions = other_org.ok(other_org.get("/v1/sessions", params={"limit": 200}))["sessions"]
    assert {view["session"]["id"] for view in sessions} == {
        globex.session, globex.subagent, globex.fork
    }
    listed = json.dumps(sessions) + json.dumps(agents)
    assert ACME not in listed
    assert GLOBEX in listed
    # And the other way round.
    mine = api.ok(api.get("/v1/sessions"))["sessions"]
    assert {view["session"]["id"] for view in mine} == {acme.session, acme.subagent, acme.fork}
    assert GLOBEX not in json.dumps(mine)


def test_org_settings_are_each_orgs_own(api: Api, other_org: Api, acme: World) -> None:
    other_org.ok(other_org.patch("/v1/org/settings", {"memory": {"use": False,
                                                                  "generate": False}}))
    assert api.ok(api.get("/v1/org/settings"))["memory"] == {"use": True, "generate": True}
    assert api.view(acme.session)["memory"]["settings"] == {"use": True, "generate": True}


# --- GraphQL -------------------------------------------------------------------------------

INTROSPECTION = """
query {
  __schema {
    queryType { name }
    mutationType { name }
    types {
      name kind
      enumValues { name }
      fields {
        name
        args { name defaultValue type { ...Ref } }
        type { ...Ref }
      }
    }
  }
}
fragment Ref on __Type { kind name ofType { kind name ofType { kind name ofType { kind name } } } }
"""


def named(ref: dict[str, Any]) -> tuple[str, bool]:
    """The named type under NON_NULL/LIST wrappers, and whether the outer one is NON_NULL."""
    required = ref["kind"] == "NON_NULL"
    while ref.get("ofType"):
        ref = ref["ofType"]
    return ref["name"], required


class Walker:
    """Builds a selection of every field reachable from a type, each type once per path."""

    def __init__(self, schema: dict[str, Any], max_depth: int = 9) -> None:
        self.types = {t["name"]: t for t in schema["types"]}
        self.max_depth = max_depth

    def is_object(self, name: str) -> bool:
        return bool(self.types[name]["kind"] == "OBJECT")

    def selection(self, type_name: str, path: tuple[str, ...] = ()) -> str:
        parts: list[str] = []
        for field in self.types[type_name]["fields"]:
            if any(named(arg["type"])[1] and arg["defaultValue"] is None
                   for arg in field["args"]):
                args = self.arguments(field)
                if args is None:
                    continue
            else:
                args = ""
            target, _ = named(field["type"])
            page = self.connection_node(target)
            if not self.is_object(target):
                parts.append(field["name"] + args)
            elif page is not None and page not in path and len(path) < self.max_depth:
                inner = self.selection(page, (*path, type_name, target))
                parts.append(f"{field['name']}{args} {{ nodes {{ {inner} }} }}")
            elif page is None and target not in path and len(path) < self.max_depth:
                inner = self.selection(target, (*path, type_name))
                parts.append(f"{field['name']}{args} {{ {inner} }}")
        return " ".join(parts) or "__typename"

    def connection_node(self, name: str) -> str | None:
        """The node type of a connection (walked through its `nodes`: its edges hold the same
        nodes with cursors of their own keys); None for any other type."""
        fields = {f["name"]: f for f in self.types[name].get("fields") or []}
        if "pageInfo" not in fields:
            return None
        return named(fields["nodes"]["type"])[0]

    @staticmethod
    def arguments(field: dict[str, Any]) -> str | None:
        """Values for required arguments nested fields take (memory.entry(key))."""
        if field["name"] == "entry":
            return '(key: "budget")'
        return None


def graphql(client: Api, query: str, **variables: Any) -> dict[str, Any]:
    body: dict[str, Any] = flat(client.graphql(query, **variables))
    return body


def test_graphql_roots_answer_null_or_empty_for_another_orgs_ids(
    other_org: Api, acme: World, globex: World
) -> None:
    walker = Walker(graphql(other_org, INTROSPECTION)["data"]["__schema"])
    session = walker.selection("Session")
    agent = walker.selection("Agent")
    query = f"""
    query($s: ID!, $sub: ID!, $fork: ID!, $a: ID!, $agent: String!) {{
      session(id: $s) {{ {session} }}
      sub: session(id: $sub) {{ id }}
      forked: session(id: $fork) {{ id }}
      agent(id: $a) {{ {agent} }}
      byAgent: sessions(agent: $agent) {{ nodes {{ id }} }}
    }}"""
    answer = graphql(other_org, query, s=acme.session, sub=acme.subagent, fork=acme.fork,
                     a=acme.agent, agent=acme.agent)
    assert "errors" not in answer, answer
    assert answer["data"] == {
        "session": None, "sub": None, "forked": None, "agent": None, "byAgent": []
    }


def test_no_nested_graphql_field_reaches_another_org(
    api: Api, other_org: Api, acme: World, globex: World
) -> None:
    schema = graphql(other_org, INTROSPECTION)["data"]["__schema"]
    walker = Walker(schema)
    query = (
        f"query {{ sessions(first: 200) {{ nodes {{ "
        f"{walker.selection('Session', ('Query',))} }} }} "
        f"agents(first: 200) {{ nodes {{ {walker.selection('Agent', ('Query',))} }} }} }}"
    )
    theirs = graphql(other_org, query)
    assert "errors" not in theirs, theirs["errors"]
    text = json.dumps(theirs)
    assert ACME not in text
    for acme_id in (acme.session, acme.subagent, acme.fork, acme.agent, acme.turn, acme.head):
        assert acme_id not in text
    # The walk is deep enough to matter: the same query shows acme everything of its own,
    # through entries, sources, changes, cites, turns, runs and versions.
    ours = graphql(api, query)
    assert "errors" not in ours, ours["errors"]
    ours_text = json.dumps(ours)
    assert GLOBEX not in ours_text
    for acme_id in (acme.session, acme.subagent, acme.fork, acme.agent, acme.turn, acme.head):
        assert acme_id in ours_text
    assert GLOBEX in text
    [session] = [s for s in theirs["data"]["sessions"] if s["id"] == globex.session]
    entry = session["memory"]["entry"]
    assert entry["key"] == "budget"
    assert GLOBEX in entry["content"]
    assert [item["id"] for item in session["items"]][:2] == ["i-01", "i-02"]
    assert all(GLOBEX in item["content"] for item in session["items"][:2])


def mutation_calls(schema: dict[str, Any], world: World) -> list[tuple[str, str]]:
    """Each mutation that names a session, called with `world`'s ids and valid arguments."""
    values: dict[str, str] = {
        "sessionId": json.dumps(world.session),
        "expected": json.dumps(world.head),
        "revision": str(world.revision),
        "key": '"budget"',
        "content": '"Stolen."',
        "to": json.dumps(world.first_version),
        "at": json.dumps(world.first_version),
    }
    by_type = {"String": '"x"', "ID": json.dumps(world.session), "Int": "0", "Boolean": "false"}
    types = {t["name"]: t for t in schema["types"]}

    def value(arg: dict[str, Any]) -> str:
        if arg["name"] in values:
            return values[arg["name"]]
        name = named(arg["type"])[0]
        if types[name]["kind"] == "ENUM":  # Kind, Visibility, ...: a valid enum literal
            return str(types[name]["enumValues"][0]["name"])
        return by_type[name]

    mutation = types[schema["mutationType"]["name"]]
    calls: list[tuple[str, str]] = []
    for field in mutation["fields"]:
        names = [arg["name"] for arg in field["args"]]
        if "sessionId" not in names:
            continue
        args = ", ".join(f"{arg['name']}: {value(arg)}" for arg in field["args"])
        calls.append((field["name"], f"mutation {{ {field['name']}({args}) {{ __typename }} }}"))
    return calls


def test_graphql_mutations_on_another_orgs_session_are_not_found(
    api: Api, other_org: Api, graph: Graph, acme: World, globex: World
) -> None:
    before = state(api, graph, acme)
    schema = graphql(other_org, INTROSPECTION)["data"]["__schema"]
    calls = mutation_calls(schema, acme)
    assert {"remember", "forget", "configure", "refresh"} <= {name for name, _ in calls}
    for name, document in calls:
        answer = graphql(other_org, document)
        assert answer["data"] is None, (name, answer)
        [error] = answer["errors"]
        assert error["extensions"]["code"] == "NOT_FOUND", (name, error)
        assert ACME not in json.dumps(answer)
    # A foreign version named from one's own session is not found either.
    for document in (
        f'mutation {{ fork(sessionId: "{globex.session}", at: "{acme.head}") {{ id }} }}',
        f'mutation {{ revert(sessionId: "{globex.session}", expected: "{globex.head}", '
        f'revision: {globex.revision}, to: "{acme.first_version}") {{ id }} }}',
    ):
        answer = graphql(other_org, document)
        assert answer["data"] is None, answer
        assert answer["errors"][0]["extensions"]["code"] == "NOT_FOUND"
    assert state(api, graph, acme) == before
