"""Every GraphQL list that grows with history is a Relay connection with opaque keyset
cursors. Paged two at a time, each gives its whole list in order, once; a write landing between
two pages neither repeats nor skips what was there; a bad `first` or `after` names itself."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

import pytest

from tests.conftest import Api, Graph, user

pytestmark = pytest.mark.usefixtures("graphql_fast_path")

STUB_MODEL = "openai:gpt-4o-mini"  # the scripted stub: with nothing scripted, no changes
PAGE = "edges {{ cursor node {{ {n} }} }} nodes {{ {n} }} pageInfo {{ hasNextPage endCursor }}"


def page_of(n: str) -> str:
    return PAGE.format(n=n)


ARGS = "(first: $first, after: $after)"
SESSION = "query($s: ID!, $first: Int!, $after: String) {{ session(id: $s) {{ {body} }} }}"
AGENT = "query($a: ID!, $first: Int!, $after: String) {{ agent(id: $a) {{ {body} }} }}"
ROOT = "query($first: Int!, $after: String) {{ {body} }}"

# Each connection: its document, and where the connection is in the answer.
CONNECTIONS: dict[str, tuple[str, tuple[Any, ...]]] = {
    "Session.items": (SESSION.format(body=f"items{ARGS} {{ {page_of('id seq')} }}"),
                      ("session", "items")),
    "Session.turns": (SESSION.format(body=f"turns{ARGS} {{ {page_of('id at')} }}"),
                      ("session", "turns")),
    "Session.runs": (SESSION.format(body=f"runs{ARGS} {{ {page_of('id queuedAt')} }}"),
                     ("session", "runs")),
    "Session.versions": (SESSION.format(body=f"versions{ARGS} {{ {page_of('id cause')} }}"),
                         ("session", "versions")),
    "Memory.entries": (
        SESSION.format(body=f"memory {{ entries{ARGS} {{ totalCount {page_of('key')} }} }}"),
        ("session", "memory", "entries"),
    ),
    "Entry.changes": (
        SESSION.format(body='memory { entry(key: "k0") { '
                       f"changes{ARGS} {{ {page_of('op content')} }} }} }}"),
        ("session", "memory", "entry", "changes"),
    ),
    "Version.items": (
        SESSION.format(body="versions(first: 200) { nodes { "
                       f"items{ARGS} {{ {page_of('id')} }} }} }}"),
        ("session", "versions", -1, "items"),
    ),
    "Version.entries": (
        SESSION.format(body="versions(first: 200) { nodes { "
                       f"entries{ARGS} {{ {page_of('key')} }} }} }}"),
        ("session", "versions", -1, "entries"),
    ),
    "Agent.sessions": (AGENT.format(body=f"sessions{ARGS} {{ {page_of('id')} }}"),
                       ("agent", "sessions")),
    "Agent.learningJobs": (AGENT.format(body=f"learningJobs{ARGS} {{ {page_of('id')} }}"),
                           ("agent", "learningJobs")),
    "AgentMemory.entries": (
        AGENT.format(body=f"memory {{ entries{ARGS} {{ {page_of('key content')} }} }}"),
        ("agent", "memory", "entries"),
    ),
    "AgentMemory.log": (AGENT.format(body=f"memory {{ log{ARGS} {{ {page_of('version')} }} }}"),
                        ("agent", "memory", "log")),
    "AgentEntry.changes": (
        AGENT.format(body="memory { entries(first: 1) { nodes { "
                     f"changes{ARGS} {{ {page_of('version op')} }} }} }} }}"),
        ("agent", "memory", "entries", "nodes", 0, "changes"),
    ),
    "Query.sessions": (ROOT.format(body=f"sessions{ARGS} {{ {page_of('id')} }}"), ("sessions",)),
    "Query.agents": (ROOT.format(body=f"agents{ARGS} {{ {page_of('id')} }}"), ("agents",)),
}


def dig(data: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        data = data["nodes"][step] if isinstance(step, int) and "nodes" in data else data[step]
    return data


def ask(api: Api, name: str, first: int, after: str | None, ids: dict[str, str]) -> dict[str, Any]:
    query, path = CONNECTIONS[name]
    answer = api.graphql(query, first=first, after=after, **ids)
    assert "errors" not in answer, (name, answer)
    found: dict[str, Any] = dig(answer["data"], path)
    return found


def walk(api: Api, name: str, ids: dict[str, str], first: int = 2) -> list[Any]:
    """Every node of a connection, page by page, checking each page's shape on the way."""
    nodes: list[Any] = []
    after: str | None = None
    for _ in range(100):
        page = ask(api, name, first, after, ids)
        assert [edge["node"] for edge in page["edges"]] == page["nodes"], name
        assert len(page["nodes"]) <= first, name
        nodes += page["nodes"]
        info = page["pageInfo"]
        if not info["hasNextPage"]:
            return nodes
        assert info["endCursor"] == page["edges"][-1]["cursor"], name
        after = info["endCursor"]
    raise AssertionError(f"{name} never ended")


@dataclass(frozen=True)
class World:
    agent: str
    session: str

    def ids(self, name: str) -> dict[str, str]:
        """The variables of a connection's document."""
        if name.startswith("Agent"):
            return {"a": self.agent}
        return {} if name.startswith("Query") else {"s": self.session}


def agent_remember(api: Api, agent: str, key: str, content: str) -> None:
    version = api.ok(api.get(f"/v1/agents/{agent}/memory"))["version"]
    command = {"_tag": "Remember", "key": key, "content": content, "kind": "procedure"}
    api.ok(api.post(f"/v1/agents/{agent}/memory", {"expected": version, "command": command}))


def build(api: Api, turns: int) -> World:
    """A session with turns (and their runs), edits, a revert and a fork in its history, and an
    agent memory with a log and an entry changed three times."""
    agent = api.agent()["id"]
    sid = api.session(agent, model=STUB_MODEL)["session"]["id"]
    for n in range(turns):
        api.turn(sid, user(f"Step {n}.", id=f"t{n}"))
    api.wait_idle(sid, timeout=120)
    for n in range(3):
        api.remember(sid, f"k{n}", f"Fact {n}.")
    back_to = api.view(sid)["session"]["head"]
    api.remember(sid, "k0", "Fact 0, second form.")
    api.remember(sid, "gone", "Undone by the revert.")
    now = api.view(sid)["session"]
    api.ok(api.post(f"/v1/sessions/{sid}/revert",
                    {"expected": now["head"], "revision": now["revision"], "to": back_to}))
    api.remember(sid, "k0", "Fact 0, third form.")
    api.remember(sid, "k0", "Fact 0, fourth form.")
    api.remember(sid, "k3", "Fact 3.")
    api.ok(api.post(f"/v1/sessions/{sid}/fork", {}), 201)
    api.session(agent)
    api.agent("second")
    api.agent("third")
    for n in range(3):
        agent_remember(api, agent, f"habit-{n}", f"Habit {n}.")
    agent_remember(api, agent, "habit-0", "Habit 0, again.")
    agent_remember(api, agent, "habit-0", "Habit 0, once more.")
    return World(agent, sid)


def test_every_connection_pages_two_at_a_time_to_its_whole_list(api: Api, graph: Graph) -> None:
    world = build(api, turns=3)
    for name in CONNECTIONS:
        ids = world.ids(name)
        whole = ask(api, name, 200, None, ids)
        assert whole["pageInfo"]["hasNextPage"] is False, name
        # enough for two pages at least (a run or a learning job per turn, if any ran)
        assert len(whole["nodes"]) >= (1 if name.endswith(("runs", "learningJobs")) else 3), (
            name, whole)
        paged = walk(api, name, ids)
        assert paged == whole["nodes"], name  # in order, each once
        assert len({json.dumps(n, sort_keys=True) for n in paged}) == len(paged), name
    # The timeline is the branch's, walked from the head past the revert and the edits.
    expected = graph.rows(
        "MATCH (:Session {id: $s})-[:HEAD]->(h:Version) "
        "MATCH (h)-[:PARENT*0..]->(:Version)-[:ADDS]->(i:Item) RETURN i.id AS id ORDER BY i.seq",
        s=world.session,
    )
    items = walk(api, "Session.items", world.ids("Session.items"))
    assert [i["id"] for i in items] == [row["id"] for row in expected]
    assert [i["seq"] for i in items] == list(range(1, len(items) + 1))
    assert "Remember gone" not in json.dumps(items)  # the reverted branch is not on it
    # entries by key, with their total; the entry's changes newest first, through the revert
    entries = walk(api, "Memory.entries", world.ids("Memory.entries"))
    assert [e["key"] for e in entries] == ["k0", "k1", "k2", "k3"]
    assert ask(api, "Memory.entries", 2, None, world.ids("Session"))["totalCount"] == 4
    changes = walk(api, "Entry.changes", world.ids("Session"), first=1)
    assert [c["content"] for c in changes] == [
        "Fact 0, fourth form.", "Fact 0, third form.", "Fact 0."
    ]
    # the versions oldest first, the runs newest first
    versions = walk(api, "Session.versions", world.ids("Session"))
    assert versions[0]["cause"] == "start"
    assert [v["cause"] for v in versions].count("revert") == 1
    runs = walk(api, "Session.runs", world.ids("Session"), first=1)
    queued = [r["queuedAt"] for r in runs]
    assert queued == sorted(queued, reverse=True)
    agent_changes = walk(api, "AgentEntry.changes", world.ids("Agent"), first=1)
    assert [c["version"] for c in agent_changes] == [5, 4, 1]
    cursors_are_opaque_and_bad_arguments_name_their_field(api, world)


def test_a_write_between_pages_neither_repeats_nor_skips(api: Api) -> None:
    world = build(api, turns=0)
    sid, at_session, at_agent = world.session, world.ids("Session"), world.ids("Agent")
    # the timeline: a new item lands after the first page, and comes at the end
    before = walk(api, "Session.items", at_session)
    first = ask(api, "Session.items", 2, None, at_session)
    api.remember(sid, "k6", "Fact 6.")
    rest = walk_from(api, "Session.items", first, at_session)
    assert [i["id"] for i in first["nodes"] + rest][: len(before)] == [i["id"] for i in before]
    assert len(first["nodes"] + rest) == len(before) + 1
    # entries by key: one added before the cursor is not shown later; none repeats or is lost
    keys = [e["key"] for e in walk(api, "Memory.entries", at_session)]
    page = ask(api, "Memory.entries", 2, None, at_session)
    api.remember(sid, "a-new", "Sorts first.")
    api.remember(sid, "zz-new", "Sorts last.")
    seen = [e["key"] for e in page["nodes"] + walk_from(api, "Memory.entries", page, at_session)]
    assert seen == [*keys, "zz-new"]
    # an entry's changes: a new change becomes the head; the next page goes on where it was
    story = [c["content"] for c in walk(api, "Entry.changes", at_session, first=1)]
    page = ask(api, "Entry.changes", 1, None, at_session)
    api.remember(sid, "k0", "Fact 0, fifth form.")
    later = walk_from(api, "Entry.changes", page, at_session)
    seen = [c["content"] for c in page["nodes"] + later]
    assert seen == story
    # the agent's log: a version lands between two pages and comes at the end
    log = [e["version"] for e in walk(api, "AgentMemory.log", at_agent)]
    page = ask(api, "AgentMemory.log", 2, None, at_agent)
    agent_remember(api, world.agent, "habit-9", "Habit 9.")
    later = walk_from(api, "AgentMemory.log", page, at_agent)
    seen = [e["version"] for e in page["nodes"] + later]
    assert seen == [*log, log[-1] + 1]


def walk_from(api: Api, name: str, page: dict[str, Any], ids: dict[str, str]) -> list[Any]:
    """The nodes after a page already read, page by page."""
    nodes: list[Any] = []
    while page["pageInfo"]["hasNextPage"]:
        page = ask(api, name, len(page["edges"]), page["pageInfo"]["endCursor"], ids)
        nodes += page["nodes"]
    return nodes


def cursors_are_opaque_and_bad_arguments_name_their_field(api: Api, world: World) -> None:
    page = ask(api, "Session.items", 2, None, world.ids("Session"))
    cursor = page["pageInfo"]["endCursor"]
    assert not cursor.isdigit()
    assert cursor != str(page["nodes"][-1]["seq"])
    other = ask(api, "Memory.entries", 2, None, world.ids("Session"))["pageInfo"]["endCursor"]
    query, _ = CONNECTIONS["Session.items"]
    for first, after, field in [
        (-1, None, "first"),
        (201, None, "first"),
        (2, "not a cursor", "after"),
        (2, "%%%", "after"),
        (2, base64.urlsafe_b64encode(b'{"v":1,"l":"items","k":["x"]}').decode(), "after"),
        (2, other, "after"),  # another list's cursor
    ]:
        answer = api.graphql(query, s=world.session, first=first, after=after)
        [error] = answer["errors"]
        assert error["extensions"]["code"] == "VALIDATION_ERROR", (first, after, error)
        assert error["extensions"]["field"] == field, (first, after, error)
        assert error["message"].startswith(field), error
    # first: 0 is an empty page that still says whether there is more
    empty = ask(api, "Session.items", 0, None, world.ids("Session"))
    assert empty["nodes"] == []
    assert empty["pageInfo"] == {"hasNextPage": True, "endCursor": None}


def forged(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode()


@pytest.mark.parametrize(
    ("name", "after"),
    [
        ("Query.agents", forged('{"v":1,"l":"agents","k":[0,"\\ud800"]}')),  # not text
        ("Query.sessions", forged('{"v":1,"l":"sessions","k":[0,"\\udfff"]}')),
        ("Query.agents", forged("[" * 50_000)),  # nests deeper than any parser goes
    ],
    ids=["agents-surrogate", "sessions-surrogate", "agents-deep"],
)
def test_a_forged_cursor_is_bad_input_on_after(api: Api, name: str, after: str) -> None:
    # a cursor the list did not give names `after`, however it was made
    query, _ = CONNECTIONS[name]
    answer = api.graphql(query, first=2, after=after)
    [error] = answer["errors"]
    assert error["extensions"] == {
        "code": "VALIDATION_ERROR", "_tag": "ValidationError", "field": "after"}, error


def test_a_forged_log_cursor_out_of_the_versions_bounds_is_bad_input_as_on_rest(api: Api) -> None:
    # A11: the log's cursor is a version; one before any version, or beyond the versions'
    # bound, is no cursor the log gave, as REST refuses such an `after`: not a way to read the
    # first page
    agent = api.agent()["id"]
    agent_remember(api, agent, "habit-1", "Habit 1.")
    query, path = CONNECTIONS["AgentMemory.log"]
    first = api.graphql(query, a=agent, first=2,
                        after=forged(json.dumps({"v": 1, "l": "log", "p": agent, "k": [0]})))
    assert [e["version"] for e in dig(first["data"], path)["nodes"]] == [1]
    for version in (-1, 2**31):
        cursor = forged(json.dumps({"v": 1, "l": "log", "p": agent, "k": [version]}))
        [error] = api.graphql(query, a=agent, first=2, after=cursor)["errors"]
        assert error["extensions"] == {
            "code": "VALIDATION_ERROR", "_tag": "ValidationError", "field": "after"}, error
        rest = api.get(f"/v1/agents/{agent}/memory/log?after={version}")
        assert rest.status_code == 400
        assert rest.json()["field"] == "after"


def test_a_cursor_of_one_parents_list_is_bad_input_on_anothers(api: Api) -> None:
    # a cursor names its place in the list it came from: given to the same list of another
    # session (or version, or agent), it is no cursor that list gave, never a page of it
    # starting from that place
    sids = [api.session()["session"]["id"] for _ in range(2)]
    for sid in sids:
        api.turn(sid, user("One."), user("Two."), user("Three."))
    query = ("query($s: ID!, $after: String) { session(id: $s) { items(first: 1, "
             "after: $after) { nodes { seq } pageInfo { endCursor } } } }")
    page = api.graphql(query, s=sids[0])["data"]["session"]["items"]
    after = page["pageInfo"]["endCursor"]
    same = api.graphql(query, s=sids[0], after=after)["data"]["session"]["items"]
    assert [n["seq"] for n in same["nodes"]] == [2]
    [error] = api.graphql(query, s=sids[1], after=after)["errors"]
    assert error["extensions"] == {
        "code": "VALIDATION_ERROR", "_tag": "ValidationError", "field": "after"}, error


def test_an_entrys_change_cursor_is_bad_input_on_another_entrys_changes(api: Api) -> None:
    # S12, A11: an entry's story is paged by a cursor of that story. Given to every entry of a
    # page, it names `after` on each other one, which never answers the first entry's story
    # in its place
    sid = api.session()["session"]["id"]
    for content in ("Short answers.", "Very short answers."):
        api.remember(sid, "tone", content)
    api.remember(sid, "budget", "The trip budget is 1500 EUR.")
    agent = api.agent()["id"]
    for content in ("Book trains.", "Book night trains."):
        agent_remember(api, agent, "tone", content)
    agent_remember(api, agent, "budget", "Keep to the budget.")
    changes = "changes(first: 1, after: $c) { nodes { content } pageInfo { endCursor } }"
    for query, args, where in (
        ("query($s: ID!, $c: String) { session(id: $s) { memory { "
         f"entries(first: 10) {{ nodes {{ key {changes} }} }} }} }} }}",
         {"s": sid}, ("session", "memory", "entries", "nodes")),
        ("query($a: ID!, $c: String) { agent(id: $a) { memory { "
         f"entries(first: 10) {{ nodes {{ key {changes} }} }} }} }} }}",
         {"a": agent}, ("agent", "memory", "entries", "nodes")),
    ):
        first = api.graphql(query, **args, c=None)
        assert "errors" not in first, first
        nodes = {node["key"]: node for node in dig(first["data"], where)}
        cursor = nodes["tone"]["changes"]["pageInfo"]["endCursor"]
        answer = api.graphql(query, **args, c=cursor)
        [error] = answer["errors"]
        assert error["extensions"]["field"] == "after", error
        assert error["extensions"]["code"] == "VALIDATION_ERROR", error
        assert error["path"] == [*where, list(nodes).index("budget"), "changes"], error
