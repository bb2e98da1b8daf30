"""GraphQL at /graphql (SPEC section 5): nested reads, the memory mutations, error codes,
masking, auth, and a bounded number of statements per request."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.conftest import Api, Graph, RunningServer, flat, user
from tests.openai_stub import OpenAIStub, changes

pytestmark = pytest.mark.usefixtures("graphql_fast_path")

STUB_MODEL = "openai:gpt-4o-mini"

SESSION_STATE = "head revision memory { settings { use generate } overrides { use generate } }"

NESTED = """
query($id: ID!) {
  session(id: $id) {
    id head revision
    agent { id name sessions { nodes { id } } }
    memory {
      processed
      settings { use generate }
      overrides { use generate }
      entries { nodes {
        key content kind status updatedAt
        sources { id type content author turn { id status session { id } } }
        changes { nodes {
          op maker madeBy key content kind status beforeContent beforeKind beforeStatus
          revision head model
          cites { id type turn { id } }
          session { id }
          run { id model read }
        } }
      } }
    }
  }
}
"""

REMEMBER = """
mutation($s: ID!, $e: String!, $r: Int!, $key: String!, $content: String!, $kind: Kind!) {
  remember(sessionId: $s, expected: $e, revision: $r, key: $key, content: $content,
           kind: $kind) {
    id head revision memory { entries { nodes { key content kind status sources { id type } } } }
  }
}
"""

FORGET = """
mutation($s: ID!, $e: String!, $r: Int!, $key: String!) {
  forget(sessionId: $s, expected: $e, revision: $r, key: $key) {
    head revision memory { entries { nodes { key status } } }
  }
}
"""

REFRESH = """
mutation($s: ID!, $e: String!, $r: Int!) {
  refresh(sessionId: $s, expected: $e, revision: $r) {
    head revision memory { processed entries { nodes { key content sources { id } } } }
  }
}
"""


def current(api: Api, sid: str) -> tuple[str, int]:
    session = api.view(sid)["session"]
    return session["head"], session["revision"]


def error_of(answer: dict[str, Any], code: str) -> dict[str, Any]:
    """The one error of a failed mutation, with its extensions.code; data is null."""
    assert answer.get("data") is None, answer
    [error] = answer["errors"]
    assert error["extensions"]["code"] == code, error
    assert "Traceback" not in str(error)
    found: dict[str, Any] = error
    return found


def count(graph: Graph, pattern: str) -> int:
    return int(graph.value(f"RETURN COUNT {{ {pattern} }} AS n"))


# --- Nested reads --------------------------------------------------------------------------


def test_nested_read_reaches_entries_sources_turns_and_the_story_of_each_change(
    api: Api, openai_stub: OpenAIStub
) -> None:
    created = api.session(model=STUB_MODEL)
    sid = created["session"]["id"]
    openai_stub.script(
        changes(
            {"op": "remember", "key": "city", "content": "The trip goes to Lisbon.",
             "kind": "fact", "sources": ["i-01"]},
            {"op": "remember", "key": "budget", "content": "The trip budget is 1500 EUR.",
             "kind": "fact", "sources": ["i-02"]},
        )
    )
    turn = api.turn(sid, user("We go to Lisbon.", id="i-01"),
                    user("The trip budget is 1500 EUR.", id="i-02"))["turn"]
    api.wait_idle(sid)
    api.remember(sid, "budget", "We decided on 2000 EUR.", "decision")
    api.ok(api.command(sid, {"_tag": "Forget", "key": "budget"}))
    rest = api.view(sid)

    answer = flat(api.graphql(NESTED, id=sid))
    assert "errors" not in answer, answer["errors"]
    session = answer["data"]["session"]
    assert (session["id"], session["head"], session["revision"]) == (
        sid, rest["session"]["head"], rest["session"]["revision"]
    )
    assert session["agent"]["id"] == created["session"]["agent"]
    assert session["agent"]["sessions"] == [{"id": sid}]
    memory = session["memory"]
    assert memory["processed"] == ["i-01", "i-02"]
    assert memory["settings"] == {"use": True, "generate": True}
    assert memory["overrides"] == {"use": None, "generate": None}
    entries = {entry["key"]: entry for entry in memory["entries"]}
    # The same S2 view as REST, entry by entry (GraphQL names REST's words through the enums).
    assert {
        key: {"key": key, "content": e["content"], "kind": e["kind"],
              "sources": [s["id"] for s in e["sources"]], "updatedAt": e["updatedAt"],
              "status": e["status"]}
        for key, e in entries.items()
    } == {
        key: {**e, "kind": e["kind"].upper(), "status": e["status"].upper()}
        for key, e in rest["memory"]["entries"].items()
    }

    # session -> memory -> entry -> sources -> item -> turn -> session
    city = entries["city"]
    [source] = city["sources"]
    assert source["id"] == "i-01"
    assert source["content"] == "We go to Lisbon."
    assert source["turn"] == {"id": turn["id"], "status": "COMPLETED", "session": {"id": sid}}

    # entry -> changes: newest first, with before and after, maker, cites and session.
    budget = entries["budget"]
    assert budget["status"] == "RETRACTED"
    [forget_item] = budget["sources"]
    assert forget_item["type"] == "memory_edit"
    assert forget_item["turn"] is None
    story = budget["changes"]
    assert [(c["op"], c["maker"]) for c in story] == [
        ("FORGET", "PERSON"), ("REMEMBER", "PERSON"), ("REMEMBER", "CONSOLIDATION")
    ]
    forgot, replaced, learned = story
    assert forgot["madeBy"] == replaced["madeBy"] == "ana"
    assert (forgot["beforeContent"], forgot["beforeStatus"], forgot["status"]) == (
        "We decided on 2000 EUR.", "ACTIVE", "RETRACTED"
    )
    assert forgot["cites"] == [{"id": forget_item["id"], "type": "memory_edit", "turn": None}]
    assert (replaced["beforeContent"], replaced["beforeKind"]) == (
        "The trip budget is 1500 EUR.", "FACT"
    )
    assert (replaced["content"], replaced["kind"]) == ("We decided on 2000 EUR.", "DECISION")
    assert replaced["cites"][0]["type"] == "memory_edit"
    assert learned["beforeContent"] is None
    assert learned["content"] == "The trip budget is 1500 EUR."
    assert learned["model"] == STUB_MODEL
    assert learned["cites"] == [{"id": "i-02", "type": "message", "turn": {"id": turn["id"]}}]
    assert learned["run"]["read"] == ["i-01", "i-02"]
    assert learned["madeBy"] == learned["run"]["id"]
    assert forgot["run"] is None
    assert all(c["session"] == {"id": sid} for c in story)
    # Each change names the revision and head it produced, newest first.
    assert forgot["head"] == rest["session"]["head"]
    assert forgot["revision"] == rest["session"]["revision"]
    revisions = [c["revision"] for c in story]
    assert revisions == sorted(revisions, reverse=True)
    assert len({c["head"] for c in story}) == 3


def test_agent_lists_its_own_sessions_with_their_memory(api: Api) -> None:
    planner = api.agent("planner")["id"]
    other = api.agent("other")["id"]
    first = api.session(planner)["session"]["id"]
    second = api.session(planner)["session"]["id"]
    elsewhere = api.session(other)["session"]["id"]
    api.remember(first, "budget", "The trip budget is 1500 EUR.")
    api.remember(elsewhere, "city", "Porto.")
    query = """
    query($a: ID!) {
      agent(id: $a) {
        id name shared
        sessions { nodes { id agent { id } memory { entries { nodes { key } } } } }
      }
      agents { nodes { id } }
      sessions { nodes { id } }
    }"""
    data = flat(api.graphql(query, a=planner))["data"]
    assert data["agent"]["name"] == "planner"
    assert data["agent"]["sessions"] == [
        {"id": first, "agent": {"id": planner}, "memory": {"entries": [{"key": "budget"}]}},
        {"id": second, "agent": {"id": planner}, "memory": {"entries": []}},
    ]
    assert {a["id"] for a in data["agents"]} == {planner, other}
    assert {s["id"] for s in data["sessions"]} == {first, second, elsewhere}


def test_unknown_ids_read_as_null(api: Api) -> None:
    data = flat(api.graphql('{ session(id: "ses-nope") { id } agent(id: "agt-nope") { id } }'))
    assert data == {"data": {"session": None, "agent": None}}


# --- Mutations -----------------------------------------------------------------------------


def test_remember_and_forget_with_expected_and_revision(api: Api, graph: Graph) -> None:
    sid = api.session()["session"]["id"]
    head, revision = current(api, sid)
    answer = flat(api.graphql(REMEMBER, s=sid, e=head, r=revision, key="budget",
                         content="The trip budget is 1500 EUR.", kind="FACT"))
    assert "errors" not in answer, answer
    remembered = answer["data"]["remember"]
    assert remembered["revision"] == revision + 1  # S12
    assert remembered["head"] != head  # S17
    [entry] = remembered["memory"]["entries"]
    assert entry["key"] == "budget"
    assert entry["status"] == "ACTIVE"
    assert [s["type"] for s in entry["sources"]] == ["memory_edit"]
    assert current(api, sid) == (remembered["head"], remembered["revision"])

    answer = flat(api.graphql(FORGET, s=sid, e=remembered["head"], r=remembered["revision"],
                         key="budget"))
    forgotten = answer["data"]["forget"]
    assert forgotten["memory"]["entries"] == [{"key": "budget", "status": "RETRACTED"}]
    assert forgotten["revision"] == revision + 2
    assert count(graph, "(:Change)") == 2
    assert count(graph, "(:Item {type: 'memory_edit'})") == 2


def test_stale_head_or_revision_is_session_conflict_and_changes_nothing(
    api: Api, graph: Graph
) -> None:
    sid = api.session()["session"]["id"]
    old_head, old_revision = current(api, sid)
    api.remember(sid, "budget", "The trip budget is 1500 EUR.")
    head, revision = current(api, sid)
    before = api.view(sid)
    for e, r in ((old_head, revision), (head, old_revision), ("v-7d21", 5)):
        for document, extra in (
            (REMEMBER, {"key": "budget", "content": "900 EUR.", "kind": "FACT"}),
            (FORGET, {"key": "budget"}),
        ):
            error = error_of(flat(api.graphql(document, s=sid, e=e, r=r, **extra)),
                             "SESSION_CONFLICT")
            assert error["extensions"]["_tag"] == "SessionConflict"
        configure = """mutation($s: ID!, $e: String!, $r: Int!) {
            configure(sessionId: $s, expected: $e, revision: $r, use: false) { revision } }"""
        error_of(flat(api.graphql(configure, s=sid, e=e, r=r)), "SESSION_CONFLICT")
    assert api.view(sid) == before
    assert count(graph, "(:Change)") == 1


def test_configure_tells_null_from_missing(api: Api, graph: Graph) -> None:
    sid = api.session()["session"]["id"]
    with_variables = f"""
    mutation($s: ID!, $e: String!, $r: Int!, $use: Boolean, $generate: Boolean) {{
      configure(sessionId: $s, expected: $e, revision: $r, use: $use, generate: $generate) {{
        {SESSION_STATE}
      }}
    }}"""
    only_generate = f"""
    mutation($s: ID!, $e: String!, $r: Int!, $generate: Boolean) {{
      configure(sessionId: $s, expected: $e, revision: $r, generate: $generate) {{
        {SESSION_STATE}
      }}
    }}"""

    def run(document: str, **switches: bool | None) -> dict[str, Any]:
        head, revision = current(api, sid)
        answer = flat(api.graphql(document, s=sid, e=head, r=revision, **switches))
        assert "errors" not in answer, answer
        state: dict[str, Any] = answer["data"]["configure"]
        assert state["head"] == head  # S15: head stays
        assert state["revision"] == revision + 1  # revision grows
        memory: dict[str, Any] = state["memory"]
        return memory

    memory = run(with_variables, use=False, generate=False)
    assert memory["overrides"] == {"use": False, "generate": False}
    assert memory["settings"] == {"use": False, "generate": False}
    # generate sent as null: its override goes; use not sent at all: its override stays.
    memory = run(with_variables, generate=None)
    assert memory["overrides"] == {"use": False, "generate": None}
    assert memory["settings"] == {"use": False, "generate": True}
    # The argument left out of the document keeps the switch as it is.
    memory = run(only_generate, generate=False)
    assert memory["overrides"] == {"use": False, "generate": False}
    # Literal null in the document removes the override too.
    head, revision = current(api, sid)
    literal = f"""mutation {{ configure(sessionId: "{sid}", expected: "{head}",
        revision: {revision}, use: null) {{ {SESSION_STATE} }} }}"""
    answer = flat(api.graphql(literal))
    assert answer["data"]["configure"]["memory"]["overrides"] == {"use": None,
                                                                    "generate": False}
    assert answer["data"]["configure"]["memory"]["settings"] == {"use": True, "generate": False}
    # Nothing sent at all: nothing changes but the revision.
    memory = run(only_generate)
    assert memory["overrides"] == {"use": None, "generate": False}
    # REST reads the same overrides.
    assert api.view(sid)["memory"]["overrides"] == {"generate": False}
    assert count(graph, "(:Item)") == 0


def test_refresh_ignores_a_stale_head_and_runs_consolidation(
    api: Api, openai_stub: OpenAIStub
) -> None:
    sid = api.session(model=STUB_MODEL)["session"]["id"]
    stale_head, stale_revision = current(api, sid)
    api.ok(api.command(sid, {"_tag": "Configure", "generate": False}))
    api.turn(sid, user("The trip budget is 1500 EUR.", id="i-01"))
    api.ok(api.command(sid, {"_tag": "Configure", "generate": True}))
    openai_stub.script(
        changes({"op": "remember", "key": "budget", "content": "The trip budget is 1500 EUR.",
                 "kind": "fact", "sources": ["i-01"]})
    )
    answer = flat(api.graphql(REFRESH, s=sid, e=stale_head, r=stale_revision))
    assert "errors" not in answer, answer  # S16: not compared
    refreshed = answer["data"]["refresh"]
    assert refreshed["memory"]["processed"] == ["i-01"]
    assert refreshed["memory"]["entries"] == [
        {"key": "budget", "content": "The trip budget is 1500 EUR.", "sources": [{"id": "i-01"}]}
    ]
    assert (refreshed["head"], refreshed["revision"]) == current(api, sid)


def test_refresh_with_no_model_is_session_conflict(api: Api, graph: Graph) -> None:
    api.ok(api.patch("/v1/org/settings", {"model": None}))
    sid = api.session()["session"]["id"]
    head, revision = current(api, sid)
    error = error_of(flat(api.graphql(REFRESH, s=sid, e=head, r=revision)), "SESSION_CONFLICT")
    assert error["path"] == ["refresh"]
    assert count(graph, "(:Run)") == 0
    assert current(api, sid) == (head, revision)


def test_a_forget_whose_key_is_not_visible_is_refused_over_rest_and_graphql(
    api: Api, graph: Graph
) -> None:
    # S1: a key is a visible name. A Forget's key is checked by the service, as a Remember's
    # is, so REST and GraphQL refuse it alike, naming the field; nothing changes.
    sid = api.session()["session"]["id"]
    api.remember(sid, "budget", "The trip budget is 1500 EUR.")
    head, revision = current(api, sid)
    hidden = "bud\u200bget"
    rest = api.command(sid, {"_tag": "Forget", "key": hidden})
    assert rest.status_code == 400, rest.text
    assert (rest.json()["_tag"], rest.json()["field"]) == ("ValidationError", "command.key")
    error = error_of(flat(api.graphql(FORGET, s=sid, e=head, r=revision, key=hidden)),
                     "VALIDATION_ERROR")
    assert error["extensions"]["field"] == "key"
    assert current(api, sid) == (head, revision)
    assert count(graph, "(:Change)") == 1


def test_errors_carry_their_codes_and_write_nothing(api: Api, graph: Graph) -> None:
    sid = api.session()["session"]["id"]
    api.remember(sid, "budget", "The trip budget is 1500 EUR.")
    head, revision = current(api, sid)
    before = api.view(sid)

    error_of(flat(api.graphql(REMEMBER, s="ses-nope", e=head, r=revision, key="a", content="A.",
                         kind="FACT")), "NOT_FOUND")
    error_of(flat(api.graphql(REFRESH, s="ses-nope", e=head, r=revision)), "NOT_FOUND")
    # An unknown kind never reaches the service: GraphQL's own check of the Kind enum.
    answer = flat(api.graphql(f'mutation {{ remember(sessionId: "{sid}", expected: "{head}", '
                         f'revision: {revision}, key: "a", content: "A.", kind: opinion) '
                         "{ revision } }"))
    assert answer.get("data") is None, answer
    [error] = answer["errors"]
    assert "'Kind'" in error["message"], error
    assert "opinion" in error["message"], error
    error = error_of(flat(api.graphql(REMEMBER, s=sid, e=head, r=revision, key="wifi",
                                 content="The wifi password is hunter2!", kind="FACT")),
                     "VALIDATION_ERROR")
    assert error["extensions"]["field"] == "content"  # S10: the argument at fault
    error_of(flat(api.graphql(REMEMBER, s=sid, e=head, r=revision, key="  ", content="A.",
                         kind="FACT")), "VALIDATION_ERROR")
    error_of(flat(api.graphql(FORGET, s=sid, e=head, r=revision, key="nope")), "SESSION_CONFLICT")
    assert api.view(sid) == before
    assert count(graph, "(:Change)") == 1
    assert count(graph, "(:Item)") == 1


def test_a_document_that_does_not_fit_the_schema_is_an_error_not_a_write(
    api: Api, graph: Graph
) -> None:
    sid = api.session()["session"]["id"]
    head, _ = current(api, sid)
    # S16 over GraphQL: expected and revision are required arguments.
    answer = flat(api.graphql(f'mutation {{ refresh(sessionId: "{sid}", expected: "{head}") '
                         "{ revision } }"))
    assert answer.get("data") is None
    assert "revision" in answer["errors"][0]["message"]
    answer = flat(api.graphql(f'mutation {{ remember(sessionId: "{sid}", expected: "{head}", '
                         'revision: "0", key: "a", content: "A.", kind: FACT) { revision } }'))
    assert answer.get("data") is None
    assert answer["errors"]
    assert count(graph, "(:Change)") == 0
    assert count(graph, "(:Run)") == 0


def test_unexpected_errors_are_masked(
    api: Api, server: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An exception that is not one of the service's errors says nothing of its insides."""
    sid = api.session()["session"]["id"]

    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("bolt://neo4j:s3cret@db:7687 exploded in session_views.cypher")

    # The one fault injected into the real server: its session reads fail.
    monkeypatch.setattr(server.service.sessions, "views", broken)
    response = api.post("/graphql", {"query": "query($id: ID!) { session(id: $id) { id } }",
                                     "variables": {"id": sid}})
    assert response.status_code == 200
    body = response.json()
    [error] = body["errors"]
    assert error["message"] == "Unexpected error."
    assert "s3cret" not in response.text
    assert "cypher" not in response.text
    assert "Traceback" not in response.text
    assert "code" not in (error.get("extensions") or {})


@pytest.mark.parametrize("authorization", [None, "Bearer obm_nope", "Basic YW5hOnNlY3JldA=="])
def test_graphql_without_a_valid_token_is_401(
    server: RunningServer, api: Api, authorization: str | None
) -> None:
    sid = api.session()["session"]["id"]
    head, revision = current(api, sid)
    headers = {} if authorization is None else {"Authorization": authorization}
    with httpx.Client(base_url=server.url, headers=headers, timeout=30) as anonymous:
        responses = [
            anonymous.post("/graphql", json={"query": "{ agents { nodes { id } } }"}),
            anonymous.get("/graphql", params={"query": "{ agents { nodes { id } } }"}),
            anonymous.post("/graphql", json={
                "query": REMEMBER,
                "variables": {"s": sid, "e": head, "r": revision, "key": "a",
                              "content": "A.", "kind": "FACT"},
            }),
        ]
    for response in responses:
        assert response.status_code == 401, response.text
        assert response.json()["_tag"] == "Unauthorized"
        assert response.headers["www-authenticate"] == 'Bearer realm="openbot-memory"'
    assert current(api, sid) == (head, revision)


# --- Bounded statements --------------------------------------------------------------------

BOUNDED = """
query($id: ID!) {
  session(id: $id) {
    id head revision
    agent {
      id
      sessions(first: 2) { nodes { id memory { entries(first: 20) { nodes {
        key changes(first: 2) { nodes { op } }
      } } } } }
    }
    memory {
      processed
      entries(first: 20) { nodes {
        key content status
        sources { id turn { id session { id } } }
        changes(first: 2) { nodes {
          op maker content beforeContent
          cites { id type turn { id } }
          session { id memory { entries(first: 20) { nodes { key } } } }
          run { id }
        } }
      } }
    }
    items { nodes { id type turn { id } } }
    versions { nodes { id cause entries(first: 20) { nodes { key } } } }
    runs { nodes { id } }
    instructions { memory sessionKeys }
  }
}
"""


def test_a_nested_read_costs_the_same_statements_for_2_entries_as_for_20(
    api: Api, start_server: Callable[..., RunningServer]
) -> None:
    # A server of its own whose workers do not poll, so only this request runs statements.
    quiet = start_server(worker_poll_seconds=3600.0, workers=1)
    client = Api(quiet.url, api.token)
    try:
        agent = client.agent()["id"]
        sizes = {2: client.session(agent)["session"]["id"],
                 20: client.session(agent)["session"]["id"]}
        for size, sid in sizes.items():
            for n in range(size):
                client.remember(sid, f"key-{n}", f"Fact {n}, first form.")
                client.remember(sid, f"key-{n}", f"Fact {n}, second form.")
        cost: dict[int, int] = {}
        for size, sid in sizes.items():
            before = quiet.service.db.statements
            answer = flat(client.graphql(BOUNDED, id=sid))
            cost[size] = quiet.service.db.statements - before
            assert "errors" not in answer, answer
            entries = answer["data"]["session"]["memory"]["entries"]
            assert len(entries) == size
            assert all(len(entry["changes"]) == 2 for entry in entries)
            assert all(len(c["session"]["memory"]["entries"]) == size
                       for entry in entries for c in entry["changes"])
            assert len(answer["data"]["session"]["versions"]) == 2 * size + 1
        assert cost[2] == cost[20], cost
        assert cost[2] > 0
    finally:
        client.http.close()


SOURCE_TURNS = """query($id: ID!) { session(id: $id) { id memory { entries(first: 200) { nodes {
  key content sources { id content turn { id at status } } } } } } }"""
ITEM_TURNS = """query($id: ID!) { session(id: $id) { items(first: 50) { nodes {
  id turn { id at status session { id } } } } } }"""


def test_entries_with_their_sources_turns_are_one_statement(
    api: Api, start_server: Callable[..., RunningServer]
) -> None:
    # The nested view (session -> entries -> sources -> turn) reads its turns with
    # the view, not in a statement of their own; they are the turns the items themselves name,
    # a fork's included, whose sources cite its parent's turns
    quiet = start_server(worker_poll_seconds=3600.0, workers=1)
    client = Api(quiet.url, api.token)
    try:
        sid = client.session()["session"]["id"]
        client.ok(client.post(f"/v1/sessions/{sid}/turns", {"items": [
            user("I prefer window seats.", id="m-1"), user("I prefer green tea.", id="m-2"),
        ]}), 201)
        client.wait_idle(sid)
        client.remember(sid, "edit", "A fact a person wrote.")  # a source with no turn
        fork = client.ok(client.post(f"/v1/sessions/{sid}/fork", {}), 201)["session"]["id"]
        answers, costs = {}, {}
        for session in (sid, fork):
            client.graphql(SOURCE_TURNS, id=session)  # the token is looked up once, then cached
            before = quiet.service.db.statements
            answers[session] = flat(client.graphql(SOURCE_TURNS, id=session))
            costs[session] = quiet.service.db.statements - before
        items = flat(client.graphql(ITEM_TURNS, id=sid))
    finally:
        client.http.close()
    assert costs == {sid: 1, fork: 1}
    by_item = {item["id"]: item["turn"] for item in items["data"]["session"]["items"]}
    for session in (sid, fork):
        answer = answers[session]
        assert "errors" not in answer, answer
        entries = answer["data"]["session"]["memory"]["entries"]
        sources = [source for entry in entries for source in entry["sources"]]
        with_turns = [source for source in sources if source["turn"] is not None]
        assert with_turns, entries  # the built-in model kept the preferences, citing m-1, m-2
        assert any(source["turn"] is None for source in sources)  # the person's edit
        for source in sources:
            turn = by_item[source["id"]]
            assert source["turn"] == (turn and {k: turn[k] for k in ("id", "at", "status")})
        assert {by_item[s["id"]]["session"]["id"] for s in with_turns} == {sid}
        assert {s["turn"]["status"] for s in with_turns} == {"COMPLETED"}


LEAN_AND_WHOLE = """query($id: ID!) {
  lean: session(id: $id) { memory { entries(first: 50) { nodes { key
    sources { id turn { id } } } } } }
  whole: session(id: $id) { memory { entries(first: 50) { edges { node { key
    sources { ...Whole } } } } } } }
fragment Whole on Item { id type role content app author at seq turn { id } }"""
ASKED = """query($id: ID!) { session(id: $id) { memory { entries(first: 50) { nodes { key
  sources { id %s turn { id } } } } } } }"""
TIMELINE = """query($id: ID!) { session(id: $id) { items(first: 50) { nodes {
  id type role content app author at seq turn { id } } } } }"""


def test_a_nested_view_reads_of_its_items_what_it_asks_and_answers_it_whole(
    api: Api,
) -> None:
    # A nested view (session -> entries -> sources -> turn) reads of its sources'
    # items only the fields the document asks (by alias, by fragment); each answers what the
    # timeline's items show. A view read for fewer fields never answers a document that asks
    # more, even when this server kept it and the session did not move.
    sid = api.session()["session"]["id"]
    api.turn(sid, {**user("I prefer window seats.", id="m-1"), "app": "travel"},
             user("My name is Ana.", id="m-2"))
    api.wait_idle(sid)
    api.remember(sid, "edit", "A fact a person wrote.")  # a source with no turn
    timeline = {item["id"]: item for item in
                flat(api.graphql(TIMELINE, id=sid))["data"]["session"]["items"]}

    def sources(answer: Any, alias: str = "session") -> dict[str, Any]:
        assert "errors" not in answer, answer
        entries = answer["data"][alias]["memory"]["entries"]
        if isinstance(entries, dict):  # asked by edges
            entries = [edge["node"] for edge in entries["edges"]]
        return {s["id"]: s for e in entries for s in e["sources"]}

    # fewer fields first: the view kept after each serves none of the next
    for asked in ([], ["role", "seq"], ["content", "at", "type", "app", "author"]):
        found = sources(flat(api.graphql(ASKED % " ".join(asked), id=sid)))
        assert found == {
            i: {"id": i, **{f: timeline[i][f] for f in asked}, "turn": timeline[i]["turn"]}
            for i in timeline  # m-1, m-2 and the edit's item, each a source
        }
    both = flat(api.graphql(LEAN_AND_WHOLE, id=sid))
    whole = sources(both, "whole")
    assert whole == timeline
    assert sources(both, "lean") == {i: {"id": i, "turn": timeline[i]["turn"]} for i in whole}
    assert whole["m-1"]["app"] == "travel"
    assert [s["author"] for s in whole.values() if s["turn"] is None] == ["ana"]  # the edit's


def test_an_entry_by_key_answers_its_sources_whole_beside_a_page_asking_their_turns(
    api: Api,
) -> None:
    # S3: an entry looked up by key answers what its sources' items hold, also when the same
    # memory's page of entries asks its sources for their turns alone
    sid = api.session()["session"]["id"]
    api.turn(sid, user("I prefer window seats.", id="m-1"))
    api.wait_idle(sid)
    [key] = api.view(sid)["memory"]["entries"]
    query = """query($s: ID!, $k: String!) { session(id: $s) { memory {
      entries { nodes { sources { turn { id } } } }
      entry(key: $k) { key sources { id type content } } } } }"""
    found = flat(api.graphql(query, s=sid, k=key))
    assert "errors" not in found, found
    assert found["data"]["session"]["memory"]["entry"]["sources"] == [
        {"id": "m-1", "type": "message", "content": "I prefer window seats."}]


def test_an_entry_is_looked_up_by_its_key_as_a_write_names_it(api: Api) -> None:
    # S1: a write trims its key, so a lookup does too; a key no write could name is bad input
    sid = api.session()["session"]["id"]
    api.remember(sid, " budget ", "The trip budget is 1500 EUR.")
    query = ("query($s: ID!, $k: String!) "
             "{ session(id: $s) { memory { entry(key: $k) { key content } } } }")
    found = api.graphql(query, s=sid, k="  budget ")
    assert found == {"data": {"session": {"memory": {"entry": {
        "key": "budget", "content": "The trip budget is 1500 EUR."}}}}}
    assert api.graphql(query, s=sid, k="hotel") == {
        "data": {"session": {"memory": {"entry": None}}}}
    for bad in ("   ", "k" * 201):
        [error] = api.graphql(query, s=sid, k=bad)["errors"]
        assert error["extensions"] == {
            "code": "VALIDATION_ERROR", "_tag": "ValidationError", "field": "key"}
