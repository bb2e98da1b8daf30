"""Agent memory through REST, rule by rule (SPEC A1, A3, A5-A11, sections 5 and 6).

Every test talks to the real server over HTTP and, where a rule is about what is (or is not)
written, reads the real Neo4j afterwards. The shapes are those of
notes/agent-memory-contract.md.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from tests.conftest import Api, Graph, RunningServer, user

Body = dict[str, Any]

ENTRY_FIELDS = {"key", "content", "kind", "sources", "updatedAt", "status", "about", "visibility"}
CREDENTIAL = "the api key is sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"


# --- helpers (also used by test_privacy.py and test_agent_graphql.py) ----------------------


def remember(key: str, content: str, kind: str = "procedure", **fields: Any) -> Body:
    """A Remember command; `fields` adds `about` and `visibility`."""
    return {"_tag": "Remember", "key": key, "content": content, "kind": kind, **fields}


def forget(key: str, **fields: Any) -> Body:
    """A Forget command; `fields` adds `about` (that person's private entry)."""
    return {"_tag": "Forget", "key": key, **fields}


def agent_memory(client: Api, agent: str) -> Body:
    """GET /v1/agents/:id/memory, which must answer 200."""
    body: Body = client.ok(client.get(f"/v1/agents/{agent}/memory"))
    return body


def post_agent(client: Api, agent: str, expected: Any, command: Body) -> httpx.Response:
    return client.post(f"/v1/agents/{agent}/memory", {"expected": expected, "command": command})


def agent_command(client: Api, agent: str, command: Body) -> httpx.Response:
    """A command with the agent memory's current version as `expected`."""
    return post_agent(client, agent, agent_memory(client, agent)["version"], command)


def agent_remember(
    client: Api, agent: str, key: str, content: str, kind: str = "procedure", **fields: Any
) -> Body:
    body: Body = client.ok(agent_command(client, agent, remember(key, content, kind, **fields)))
    return body


def agent_forget(client: Api, agent: str, key: str, **fields: Any) -> Body:
    body: Body = client.ok(agent_command(client, agent, forget(key, **fields)))
    return body


def agent_log(client: Api, agent: str, **params: Any) -> list[Body]:
    changes: list[Body] = client.ok(
        client.get(f"/v1/agents/{agent}/memory/log", params=params)
    )["changes"]
    return changes


def agent_changes(graph: Graph) -> int:
    """How many AgentChange nodes the graph holds."""
    return int(graph.value("MATCH (c:AgentChange) RETURN count(c)"))


def instructions(client: Api, session_id: str) -> Body:
    body: Body = client.ok(client.get(f"/v1/sessions/{session_id}/instructions"))
    return body


def assert_error(
    response: httpx.Response, status: int, tag: str, field: str | None = None
) -> Body:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body: Body = response.json()
    assert body["_tag"] == tag, body
    assert isinstance(body["message"], str)
    assert body["message"]
    assert "Traceback" not in response.text
    if field is not None:
        assert body.get("field") == field, body
    if status == 401:  # section 5: the answer names the scheme to sign in with
        assert response.headers["www-authenticate"] == 'Bearer realm="openbot-memory"'
    return body


def summary(view: Body) -> dict[str, tuple[str, str]]:
    return {key: (e["content"], e["status"]) for key, e in view["entries"].items()}


# --- A10: the view, Remember and Forget ---------------------------------------------------


def test_a_new_agent_has_an_empty_memory_at_version_0(api: Api, graph: Graph) -> None:
    agent = api.agent()["id"]
    assert agent_memory(api, agent) == {"entries": {}, "version": 0}  # A10
    assert agent_log(api, agent) == []  # A11
    assert agent_changes(graph) == 0


def test_remember_forget_and_remember_again_round_trip(api: Api) -> None:
    # A10: each POST answers the new {entries, version}; version grows by exactly 1.
    agent = api.agent()["id"]
    before = int(time.time() * 1000)
    first = api.ok(post_agent(api, agent, 0, remember(
        "seat", "Ana prefers a window seat.", "preference")))
    after = int(time.time() * 1000)
    assert first["version"] == 1
    entry = first["entries"]["seat"]
    assert entry == {
        "key": "seat",
        "content": "Ana prefers a window seat.",
        "kind": "preference",
        "sources": [],  # A3: a person's Remember may cite nothing
        "updatedAt": entry["updatedAt"],
        "status": "active",
        "about": None,
        "visibility": "shared",
    }
    assert isinstance(entry["updatedAt"], int)
    assert before <= entry["updatedAt"] <= after
    assert agent_memory(api, agent) == first

    # Forget: retracted, content kept.
    forgotten = api.ok(post_agent(api, agent, 1, forget("seat")))
    assert forgotten["version"] == 2
    assert forgotten["entries"]["seat"]["status"] == "retracted"
    assert forgotten["entries"]["seat"]["content"] == "Ana prefers a window seat."
    assert agent_memory(api, agent) == forgotten

    # A6: a person's Remember is the way a retracted entry comes back.
    again = api.ok(post_agent(api, agent, 2, remember(
        "seat", "Ana prefers an aisle seat now.", "preference")))
    assert again["version"] == 3
    assert summary(again) == {"seat": ("Ana prefers an aisle seat now.", "active")}
    assert set(again["entries"]["seat"]) == ENTRY_FIELDS
    assert agent_memory(api, agent) == again
    assert [c["keys"] for c in agent_log(api, agent)] == [["seat"], ["seat"], ["seat"]]


def test_remember_replaces_the_entry_with_that_key(api: Api, graph: Graph) -> None:
    agent = api.agent()["id"]
    agent_remember(api, agent, "style", "Answer in short bullet points.")
    replaced = agent_remember(api, agent, "style", "Answer in one short paragraph.", "decision")
    assert replaced["version"] == 2  # A10
    assert summary(replaced) == {"style": ("Answer in one short paragraph.", "active")}
    assert replaced["entries"]["style"]["kind"] == "decision"
    assert agent_changes(graph) == 2  # every change is recorded (section 4)


@pytest.mark.parametrize("kind", ["procedure", "preference", "decision"])
def test_each_lasting_kind_is_accepted(api: Api, kind: str) -> None:
    agent = api.agent()["id"]
    view = agent_remember(api, agent, "k", f"An entry of kind {kind}.", kind)
    assert view["entries"]["k"]["kind"] == kind  # A1


def test_forget_of_an_unknown_key_is_409_and_changes_nothing(api: Api, graph: Graph) -> None:
    agent = api.agent()["id"]
    assert_error(post_agent(api, agent, 0, forget("nope")), 409, "AgentConflict")  # A10
    agent_remember(api, agent, "seat", "Ana prefers a window seat.")
    before = agent_memory(api, agent)
    assert_error(post_agent(api, agent, 1, forget("nope")), 409, "AgentConflict")
    assert agent_memory(api, agent) == before
    assert agent_changes(graph) == 1


def test_forget_reads_its_key_and_about_as_remember_does(api: Api, graph: Graph) -> None:
    # A10: Forget names an entry as Remember names it: a key with no @ (a private entry is
    # listed as key@person, which is no key), and the person by the same name Remember took
    agent = api.agent()["id"]
    agent_remember(api, agent, "seat", "Ana prefers the aisle.", "preference", about=" ana ",
                   visibility="private")
    before = agent_memory(api, agent)
    assert set(before["entries"]) == {"seat@ana"}
    for key in ("seat@ana", "@"):
        assert_error(post_agent(api, agent, 1, forget(key)), 400, "ValidationError",
                     "command.key")
    assert agent_memory(api, agent) == before
    after = api.ok(post_agent(api, agent, 1, forget("seat", about=" ana ")))
    assert after["entries"]["seat@ana"]["status"] == "retracted"
    assert agent_changes(graph) == 2


def test_a_stale_expected_is_409_and_changes_nothing(api: Api, graph: Graph) -> None:
    agent = api.agent()["id"]
    agent_remember(api, agent, "seat", "Ana prefers a window seat.")
    agent_remember(api, agent, "style", "Answer in short bullet points.")
    before = agent_memory(api, agent)
    assert before["version"] == 2
    log = agent_log(api, agent)
    for expected in (0, 1, 3, 99):
        for command in (remember("seat", "Stale write.", "preference"), forget("seat"),
                        remember("new", "A new entry.")):
            response = post_agent(api, agent, expected, command)
            assert_error(response, 409, "AgentConflict")  # A10
    after = agent_memory(api, agent)
    assert after == before  # the version and the entries are as they were
    assert agent_log(api, agent) == log
    assert agent_changes(graph) == 2  # no AgentChange was written


def send_together(
    server: RunningServer, agent: str, sends: list[tuple[str, Body]]
) -> list[httpx.Response]:
    """POST each (token, body) to the agent's memory from its own thread and client, all
    released together by a barrier."""
    barrier = threading.Barrier(len(sends))

    def send(token_and_body: tuple[str, Body]) -> httpx.Response:
        token, body = token_and_body
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=server.url, headers=headers, timeout=120) as client:
            barrier.wait(timeout=60)
            return client.post(f"/v1/agents/{agent}/memory", json=body)

    with ThreadPoolExecutor(len(sends)) as pool:
        return list(pool.map(send, sends))


def test_two_writers_with_the_same_expected_exactly_one_wins(
    api: Api, member: Api, graph: Graph, server: RunningServer
) -> None:
    agent = api.agent("shared planner", shared=True)["id"]
    for round_ in range(5):  # several rounds, so the race is really run
        before = agent_memory(api, agent)
        changes_before = agent_changes(graph)
        version = before["version"]
        sends = [
            (api.token, {"expected": version, "command": remember(f"a-{round_}", "Ana's way.")}),
            (member.token,
             {"expected": version, "command": remember(f"b-{round_}", "Ben's way.")}),
        ]

        responses = send_together(server, agent, sends)

        statuses = Counter(r.status_code for r in responses)
        assert statuses == {200: 1, 409: 1}, [r.text for r in responses]  # A10: one wins
        [winner] = [r for r in responses if r.status_code == 200]
        [loser] = [r for r in responses if r.status_code == 409]
        assert_error(loser, 409, "AgentConflict")
        won = winner.json()
        assert won["version"] == version + 1
        lost_key = sends[responses.index(loser)][1]["command"]["key"]
        assert lost_key not in won["entries"]  # the loser changed nothing
        assert agent_memory(api, agent) == won
        assert agent_changes(graph) == changes_before + 1
        assert [c["version"] for c in agent_log(api, agent, limit=200)] == list(
            range(1, version + 2)
        )


def test_twenty_writers_that_retry_leave_gap_free_versions(
    api: Api, graph: Graph, server: RunningServer
) -> None:
    agent = api.agent()["id"]
    writers = 20
    barrier = threading.Barrier(writers)
    headers = {"Authorization": f"Bearer {api.token}"}

    def write(n: int) -> int:
        """Remember key w-n, reading the version again after each 409; the version it got."""
        with httpx.Client(base_url=server.url, headers=headers, timeout=120) as client:
            barrier.wait(timeout=60)
            for _ in range(500):
                version = client.get(f"/v1/agents/{agent}/memory").json()["version"]
                response = client.post(
                    f"/v1/agents/{agent}/memory",
                    json={"expected": version,
                          "command": remember(f"w-{n:02d}", f"Habit of writer {n}.")},
                )
                if response.status_code == 200:
                    landed: int = response.json()["version"]
                    assert landed == version + 1, response.text
                    return landed
                assert response.status_code == 409, response.text
                assert response.json()["_tag"] == "AgentConflict"
            raise AssertionError(f"writer {n} never landed")

    with ThreadPoolExecutor(writers) as pool:
        landed = list(pool.map(write, range(writers)))

    assert sorted(landed) == list(range(1, writers + 1))  # each version given out once
    final = agent_memory(api, agent)
    assert final["version"] == writers  # A10: exactly +1 per successful POST
    assert set(final["entries"]) == {f"w-{n:02d}" for n in range(writers)}
    log = agent_log(api, agent, limit=200)
    assert [c["version"] for c in log] == list(range(1, writers + 1))  # A11: gap-free
    assert sorted(key for c in log for key in c["keys"]) == sorted(final["entries"])
    assert agent_changes(graph) == writers


# --- A1, S10, A5, A9: what a command may hold --------------------------------------------

BAD_BODIES: list[tuple[str, Body, str]] = [
    ("kind fact", {"expected": 0, "command": remember("k", "A fact.", "fact")}, "command.kind"),
    ("kind hypothesis", {"expected": 0, "command": remember("k", "Maybe.", "hypothesis")},
     "command.kind"),
    ("kind opinion", {"expected": 0, "command": remember("k", "Meh.", "opinion")},
     "command.kind"),
    ("credential", {"expected": 0, "command": remember("key", CREDENTIAL)}, "command.content"),
    ("private without about",
     {"expected": 0, "command": remember("k", "Mine.", visibility="private")},
     "command.visibility"),
    ("unknown about", {"expected": 0, "command": remember("k", "Zoe's way.", about="zoe")},
     "command.about"),
    ("unknown private about",
     {"expected": 0, "command": remember("k", "Zoe's way.", about="zoe", visibility="private")},
     "command.about"),
    ("missing expected", {"command": remember("k", "No version.")}, "expected"),
]


@pytest.mark.parametrize(
    ("body", "field"), [(b, f) for _, b, f in BAD_BODIES], ids=[n for n, _, _ in BAD_BODIES]
)
def test_a_bad_command_is_400_naming_the_field_and_nothing_is_written(
    api: Api, graph: Graph, body: Body, field: str
) -> None:
    # A1: only procedure, preference, decision. S10: no credential. A9: a private entry names
    # its person. A5: `about` is a person of the org. A10: `expected` is required.
    agent = api.agent()["id"]
    response = api.post(f"/v1/agents/{agent}/memory", body)
    assert_error(response, 400, "ValidationError", field)
    assert CREDENTIAL not in response.text
    assert agent_memory(api, agent) == {"entries": {}, "version": 0}
    assert agent_changes(graph) == 0


def test_a_bad_command_on_a_filled_memory_changes_nothing(api: Api, graph: Graph) -> None:
    agent = api.agent()["id"]
    agent_remember(api, agent, "seat", "Ana prefers a window seat.", "preference")
    before = agent_memory(api, agent)
    for _, body, field in BAD_BODIES:
        if "expected" in body:
            body = {**body, "expected": 1}
        assert_error(api.post(f"/v1/agents/{agent}/memory", body), 400, "ValidationError",
                     field)
    # A credential never replaces an entry either (S10).
    assert_error(post_agent(api, agent, 1, remember("seat", CREDENTIAL, "preference")), 400,
                 "ValidationError", "command.content")
    assert agent_memory(api, agent) == before
    assert agent_changes(graph) == 1


def test_a_person_cannot_write_a_private_entry_about_someone_else(
    api: Api, member: Api, graph: Graph
) -> None:
    agent = api.agent("shared planner", shared=True)["id"]
    agent_memory(member, agent)  # ben is a person of the org
    response = post_agent(api, agent, 0, remember(
        "seat", "Ben prefers the aisle.", "preference", about="ben", visibility="private"))
    assert_error(response, 400, "ValidationError", "command.about")  # A9
    assert agent_memory(api, agent) == {"entries": {}, "version": 0}
    assert agent_changes(graph) == 0


def test_about_a_person_of_another_org_is_400(api: Api, other_org: Api, graph: Graph) -> None:
    agent_memory(other_org, other_org.agent()["id"])  # olaf exists, in globex
    agent = api.agent()["id"]
    for fields in ({"about": "olaf"}, {"about": "olaf", "visibility": "private"}):
        response = post_agent(api, agent, 0, remember("k", "Olaf's way.", **fields))
        assert_error(response, 400, "ValidationError", "command.about")  # A5
    assert agent_memory(api, agent)["version"] == 0


def test_about_and_visibility_round_trip(api: Api, member: Api) -> None:
    # A5: an entry can say whom it is about; A9: shared by default, private to its person.
    agent = api.agent("shared planner", shared=True)["id"]
    agent_memory(member, agent)
    agent_remember(api, agent, "tone", "Keep answers friendly.")
    agent_remember(api, agent, "ben-dates", "Ben books trips in May.", "preference",
                   about="ben")
    agent_remember(api, agent, "ana-seat", "Ana prefers a window seat.", "preference",
                   about="ana", visibility="private")
    agent_remember(api, agent, "explicit", "Shared on purpose.", "decision",
                   visibility="shared")
    entries = agent_memory(api, agent)["entries"]
    assert {k: (e["about"], e["visibility"]) for k, e in entries.items()} == {
        "tone": (None, "shared"),
        "ben-dates": ("ben", "shared"),
        "ana-seat@ana": ("ana", "private"),  # SPEC section 6: listed as key@person
        "explicit": (None, "shared"),
    }
    # Ben sees the shared ones, the one about him included, not Ana's private one (A9).
    seen = agent_memory(member, agent)["entries"]
    assert set(seen) == {"tone", "ben-dates", "explicit"}
    assert seen["ben-dates"]["about"] == "ben"


# --- A3: provenance of a person's Remember -------------------------------------------------


def test_a_persons_remember_cites_nothing_and_is_made_by_the_person(
    api: Api, graph: Graph
) -> None:
    agent = api.agent()["id"]
    view = agent_remember(api, agent, "seat", "Ana prefers a window seat.", "preference")
    assert view["entries"]["seat"]["sources"] == []  # A3: no items to cite
    [change] = agent_log(api, agent)
    assert (change["maker"], change["person"]) == ("person", "ana")
    # The graph records who made it: the change is MADE_BY the Person.
    rows = graph.rows(
        "MATCH (c:AgentChange)-[:MADE_BY]->(p:Person) RETURN p.id AS person, p.org AS org"
    )
    assert rows == [{"person": "ana", "org": "acme"}]
    assert agent_changes(graph) == 1


# --- A11: the log --------------------------------------------------------------------------


def test_the_log_lists_each_change_oldest_first(api: Api, member: Api, platform: Api) -> None:
    agent = api.agent("shared planner", shared=True)["id"]
    start = int(time.time() * 1000)
    agent_remember(api, agent, "seat", "Ana prefers a window seat.", "preference")
    agent_remember(member, agent, "tone", "Keep answers friendly.")
    agent_forget(api, agent, "seat")
    agent_remember(platform, agent, "style", "Answer in short bullet points.")
    end = int(time.time() * 1000)
    log = agent_log(api, agent)
    assert [(c["version"], c["maker"], c["person"], c["keys"]) for c in log] == [  # A11
        (1, "person", "ana", ["seat"]),
        (2, "person", "ben", ["tone"]),
        (3, "person", "ana", ["seat"]),
        (4, log[3]["maker"], None, ["style"]),  # a service token's edit names no person
    ]
    assert all(set(c) == {"version", "at", "maker", "person", "keys"} for c in log)
    ats = [c["at"] for c in log]
    assert all(isinstance(at, int) for at in ats)
    assert ats == sorted(ats)
    assert start <= ats[0]
    assert ats[-1] <= end


def test_the_log_pages_by_version_with_after_and_limit(api: Api) -> None:
    agent = api.agent()["id"]
    for n in range(1, 8):
        agent_remember(api, agent, f"k{n}", f"Habit {n}.")
    assert [c["version"] for c in agent_log(api, agent)] == [1, 2, 3, 4, 5, 6, 7]  # A11
    assert [c["version"] for c in agent_log(api, agent, after=2, limit=3)] == [3, 4, 5]
    assert [c["version"] for c in agent_log(api, agent, after=5)] == [6, 7]
    assert [c["version"] for c in agent_log(api, agent, limit=1)] == [1]
    assert agent_log(api, agent, after=7) == []
    assert agent_log(api, agent, after=100) == []
    # Walking the pages gives the whole log once.
    walked: list[Body] = []
    after = 0
    while page := agent_log(api, agent, after=after, limit=2):
        walked += page
        after = page[-1]["version"]
    assert walked == agent_log(api, agent)
    assert [c["keys"] for c in agent_log(api, agent, after=3, limit=2)] == [["k4"], ["k5"]]


def test_the_log_gives_50_changes_unless_asked_for_more(api: Api) -> None:
    agent = api.agent()["id"]
    for n in range(53):
        agent_remember(api, agent, f"k{n:02d}", f"Habit {n}.")
    assert [c["version"] for c in agent_log(api, agent)] == list(range(1, 51))  # A11
    assert [c["version"] for c in agent_log(api, agent, limit=200)] == list(range(1, 54))
    assert [c["version"] for c in agent_log(api, agent, after=50)] == [51, 52, 53]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("limit=0", "limit"),
        ("limit=201", "limit"),
        ("limit=x", "limit"),
        ("limit=-1", "limit"),
        ("after=x", "after"),
        ("after=-1", "after"),
    ],
)
def test_a_bad_log_parameter_is_400_naming_it(api: Api, query: str, field: str) -> None:
    agent = api.agent()["id"]
    response = api.get(f"/v1/agents/{agent}/memory/log?{query}")
    assert_error(response, 400, "ValidationError", field)  # A11


# --- A7: no timeline -----------------------------------------------------------------------


def test_fork_and_revert_leave_agent_memory_and_its_version_alone(
    api: Api, graph: Graph
) -> None:
    agent = api.agent()["id"]
    sid = api.session(agent)["session"]["id"]
    start = api.view(sid)["session"]["head"]
    api.remember(sid, "budget", "The trip budget is 1500 EUR.")
    agent_remember(api, agent, "seat", "Ana prefers a window seat.", "preference")
    api.remember(sid, "hotel", "The hotel is near the station.")
    agent_remember(api, agent, "tone", "Keep answers friendly.")
    before, log, changes = agent_memory(api, agent), agent_log(api, agent), agent_changes(graph)
    assert before["version"] == 2

    forked = api.ok(api.post(f"/v1/sessions/{sid}/fork", {}), 201)["session"]["id"]
    old_fork = api.ok(api.post(f"/v1/sessions/{sid}/fork", {"at": start}), 201)
    current = api.view(sid)["session"]
    reverted = api.post(f"/v1/sessions/{sid}/revert", {
        "expected": current["head"], "revision": current["revision"], "to": start})
    api.ok(reverted)
    assert api.view(sid)["memory"]["entries"] == {}  # the session did go back

    # A7: agent memory follows no timeline: nothing forked, nothing undone.
    assert agent_memory(api, agent) == before
    assert agent_log(api, agent) == log
    assert agent_changes(graph) == changes
    # Every session of the agent, old fork and reverted one included, sees the same entries.
    for session_id in (sid, forked, old_fork["session"]["id"]):
        assert sorted(instructions(api, session_id)["included"]["agent"]) == ["seat", "tone"]
    # And a change after the fork is seen by all of them: one memory, not one per branch.
    agent_forget(api, agent, "seat")
    for session_id in (sid, forked, old_fork["session"]["id"]):
        assert instructions(api, session_id)["included"]["agent"] == ["tone"]


def test_agent_memory_changes_leave_every_sessions_head_and_revision_alone(
    api: Api, member: Api, platform: Api
) -> None:
    agent = api.agent("shared planner", shared=True)["id"]
    mine = api.session(agent)["session"]["id"]
    api.remember(mine, "budget", "The trip budget is 1500 EUR.")
    forked = api.ok(api.post(f"/v1/sessions/{mine}/fork", {}), 201)["session"]["id"]
    bens = member.session(agent)["session"]["id"]
    clients = {mine: api, forked: api, bens: member}

    def state() -> dict[str, Any]:
        return {
            sid: (client.view(sid),
                  client.ok(client.get(f"/v1/sessions/{sid}/versions"))["versions"])
            for sid, client in clients.items()
        }

    before = state()
    agent_remember(api, agent, "seat", "Ana prefers a window seat.", "preference")
    agent_remember(member, agent, "tone", "Keep answers friendly.")
    agent_remember(api, agent, "mine", "Ana's own way.", about="ana", visibility="private")
    agent_remember(platform, agent, "style", "Answer in short bullet points.")
    agent_forget(api, agent, "seat")
    assert agent_memory(platform, agent)["version"] == 5
    # A7: no session's head, revision, memory or versions moved.
    assert state() == before


# --- A8: instructions ----------------------------------------------------------------------


def test_active_agent_entries_are_in_the_instructions_newest_first(api: Api) -> None:
    agent = api.agent()["id"]
    sid = api.session(agent)["session"]["id"]
    agent_remember(api, agent, "seat", "Ana prefers a window seat.", "preference")
    agent_remember(api, agent, "old", "Book trains, never buses.", "decision")
    agent_remember(api, agent, "tone", "Keep answers friendly.")
    agent_forget(api, agent, "old")
    shown = instructions(api, sid)
    view = agent_memory(api, agent)["entries"]
    assert set(shown["included"]["agent"]) == {"seat", "tone"}  # A8: active only
    stamps = [view[key]["updatedAt"] for key in shown["included"]["agent"]]
    assert stamps == sorted(stamps, reverse=True)  # newest first
    assert "Ana prefers a window seat." in shown["memory"]
    assert "Keep answers friendly." in shown["memory"]
    assert "Book trains, never buses." not in shown["memory"]  # retracted: never sent (S5)
    assert shown["included"]["session"] == []
    # A retracted entry brought back by a person is sent again (A6).
    agent_remember(api, agent, "old", "Book trains again.", "decision")
    shown = instructions(api, sid)
    assert set(shown["included"]["agent"]) == {"seat", "tone", "old"}
    assert shown["included"]["agent"][0] == "old"
    assert "Book trains again." in shown["memory"]


def test_instructions_hold_session_and_agent_memory_together(api: Api) -> None:
    agent = api.agent()["id"]
    sid = api.session(agent)["session"]["id"]
    api.remember(sid, "budget", "The trip budget is 1500 EUR.")
    agent_remember(api, agent, "seat", "Ana prefers a window seat.", "preference")
    shown = instructions(api, sid)
    assert shown["included"] == {"session": ["budget"], "agent": ["seat"]}  # A8 + S5
    assert "1500 EUR" in shown["memory"]
    assert "window seat" in shown["memory"]
    # Another agent's memory is not this session's.
    other = api.session(api.agent("other")["id"])["session"]["id"]
    assert instructions(api, other)["included"]["agent"] == []


def test_org_agent_memory_off_stops_learning_and_keeps_agent_entries_in(api: Api) -> None:
    # A2: the org's `agentMemory` stops learning; A8: the active entries still go into every
    # turn of the agent
    agent = api.agent()["id"]
    sid = api.session(agent)["session"]["id"]
    api.remember(sid, "budget", "The trip budget is 1500 EUR.")
    agent_remember(api, agent, "seat", "Ana prefers a window seat.", "preference")
    api.ok(api.patch("/v1/org/settings", {"agentMemory": False}))
    shown = instructions(api, sid)
    assert shown["included"] == {"session": ["budget"], "agent": ["seat"]}
    assert "window seat" in shown["memory"]
    answer = api.turn(sid, user("Hello."))
    assert answer["turn"]["shownAgent"] == ["seat"]
    api.wait_idle(sid)
    assert api.ok(api.get(f"/v1/agents/{agent}/learning")) == {"jobs": []}


def test_session_use_off_still_sends_agent_entries(api: Api) -> None:
    agent = api.agent()["id"]
    sid = api.session(agent)["session"]["id"]
    api.remember(sid, "budget", "The trip budget is 1500 EUR.")
    agent_remember(api, agent, "seat", "Ana prefers a window seat.", "preference")
    api.ok(api.command(sid, {"_tag": "Configure", "use": False}))
    shown = instructions(api, sid)
    assert shown["included"] == {"session": [], "agent": ["seat"]}  # A8: `use` is S5's only
    assert "window seat" in shown["memory"]
    assert "1500 EUR" not in shown["memory"]
    # The same with the org's default `use` off.
    api.ok(api.command(sid, {"_tag": "Configure", "use": None}))
    api.ok(api.patch("/v1/org/settings", {"memory": {"use": False}}))
    assert instructions(api, sid)["included"] == {"session": [], "agent": ["seat"]}


def test_a_shared_agents_text_carries_privacy_rules(api: Api) -> None:
    # A9: on a shared agent the text also carries fixed privacy rules.
    texts = []
    for shared in (False, True):
        agent = api.agent(f"planner {shared}", shared=shared)["id"]
        sid = api.session(agent)["session"]["id"]
        agent_remember(api, agent, "seat", "Ana prefers a window seat.", "preference")
        texts.append(instructions(api, sid)["memory"])
    alone, shared_text = texts
    assert "window seat" in alone
    assert "window seat" in shared_text
    assert len(shared_text) > len(alone)


def test_a_turn_records_the_agent_keys_it_was_shown(api: Api) -> None:
    agent = api.agent()["id"]
    sid = api.session(agent)["session"]["id"]
    agent_remember(api, agent, "seat", "Ana prefers a window seat.", "preference")
    agent_remember(api, agent, "old", "Book trains, never buses.", "decision")
    agent_remember(api, agent, "tone", "Keep answers friendly.")
    agent_forget(api, agent, "old")
    expected = instructions(api, sid)["included"]["agent"]
    assert set(expected) == {"seat", "tone"}

    answer = api.turn(sid, user("Plan a trip to Porto."))
    turn = answer["turn"]
    assert turn["shownAgent"] == expected  # A8: the turn records what it was shown
    # The record stays what it was, also after the agent memory changes.
    agent_forget(api, agent, "tone")
    again = api.ok(api.get(f"/v1/sessions/{sid}/turns/{turn['id']}"))
    assert again["turn"]["shownAgent"] == expected
    api.wait_idle(sid)
    later = api.turn(sid, user("And back."))
    assert later["turn"]["shownAgent"] == ["seat"]
    api.wait_idle(sid)


def test_a_turn_shows_what_the_sessions_person_may_see_whoever_posts_it(
    api: Api, member: Api, platform: Api
) -> None:
    # A8, A9: a turn reads the agent's entries with the session it locks, in one statement; it
    # is shown the session's person's view, also when the org's service token posts it.
    agent = api.agent("shared planner", shared=True)["id"]
    agent_remember(api, agent, "tone", "Keep answers friendly.")
    agent_remember(api, agent, "ana-seat", "Ana prefers a window seat.", "preference",
                   about="ana", visibility="private")
    agent_remember(member, agent, "ben-diet", "Ben eats no meat.", "preference",
                   about="ben", visibility="private")
    sessions = {"ana": api.session(agent)["session"]["id"],
                "ben": member.session(agent)["session"]["id"]}
    expected = {"ana": ["ana-seat@ana", "tone"], "ben": ["ben-diet@ben", "tone"]}
    for person, client in (("ana", api), ("ben", member)):
        sid = sessions[person]
        assert sorted(instructions(client, sid)["included"]["agent"]) == expected[person]
        for poster in (client, platform):
            turn = poster.turn(sid, user("Plan a trip."))["turn"]
            assert sorted(turn["shownAgent"]) == expected[person], (person, poster)
            poster.wait_idle(sid)


def fill_session(client: Api, sid: str, count: int, size: int) -> None:
    for n in range(count):
        client.remember(sid, f"s{n:02d}", f"Session fact {n:02d}. ".ljust(size, "s"))


def fill_agent(client: Api, agent: str, count: int, size: int) -> None:
    for n in range(count):
        agent_remember(client, agent, f"a{n:02d}", f"Agent habit {n:02d}. ".ljust(size, "a"))


def assert_newest_prefix(included: list[str], entries: dict[str, Body]) -> None:
    """The included keys are the newest active entries: none left out is newer (S6)."""
    active = {k: e for k, e in entries.items() if e["status"] == "active"}
    assert set(included) <= set(active)
    if included:
        oldest_in = min(active[k]["updatedAt"] for k in included)
        assert all(e["updatedAt"] <= oldest_in for k, e in active.items() if k not in included)


def test_the_budget_is_shared_half_and_half_when_both_sides_are_full(
    api: Api, start_server: Callable[..., RunningServer]
) -> None:
    small = start_server(max_length=600)
    client = Api(small.url, api.token)
    try:
        agent = client.agent()["id"]
        sid = client.session(agent)["session"]["id"]
        fill_session(client, sid, 12, 24)
        fill_agent(client, agent, 12, 24)
        shown = instructions(client, sid)
        text, included = shown["memory"], shown["included"]
        assert len(text) <= 600  # A8, S6: one budget for the whole text
        # Both sides need more than half, so each gets half: both have entries, neither all.
        assert 0 < len(included["session"]) < 12
        assert 0 < len(included["agent"]) < 12
        session_entries = client.view(sid)["memory"]["entries"]
        agent_entries = agent_memory(client, agent)["entries"]
        for keys, entries in ((included["session"], session_entries),
                              (included["agent"], agent_entries)):
            assert sum(len(k) + len(entries[k]["content"]) for k in keys) <= 300
            assert_newest_prefix(keys, entries)
            for key in keys:  # whole entries (S6)
                assert entries[key]["content"] in text
    finally:
        client.http.close()


@pytest.mark.parametrize("small_side", ["session", "agent"])
def test_what_one_side_does_not_need_goes_to_the_other(
    api: Api, start_server: Callable[..., RunningServer], small_side: str
) -> None:
    budget = 2000
    small = start_server(max_length=budget)
    client = Api(small.url, api.token)
    try:
        agent = client.agent()["id"]
        sid = client.session(agent)["session"]["id"]
        fill_session(client, sid, 1 if small_side == "session" else 40, 60)
        fill_agent(client, agent, 1 if small_side == "agent" else 40, 60)
        shown = instructions(client, sid)
        text, included = shown["memory"], shown["included"]
        assert len(text) <= budget
        assert len(included[small_side]) == 1  # the small side gets what it needs
        big_side = "agent" if small_side == "session" else "session"
        assert 1 < len(included[big_side]) < 40
        # The big side used the rest, not just its half: the text is full up to less than
        # one more entry line (with half only, it would stop near 1000 + the small side).
        assert len(text) > budget - 200, (len(text), included)
        entries = (agent_memory(client, agent)["entries"] if big_side == "agent"
                   else client.view(sid)["memory"]["entries"])
        assert sum(len(k) + len(entries[k]["content"]) for k in included[big_side]) > 1000
        assert_newest_prefix(included[big_side], entries)
    finally:
        client.http.close()


# --- Section 5: tenancy and tokens ---------------------------------------------------------


def test_another_orgs_or_an_unknown_agent_is_404(
    api: Api, other_org: Api, graph: Graph
) -> None:
    agent = api.agent()["id"]
    agent_remember(api, agent, "seat", "ACME-only window seat.", "preference")
    before = agent_memory(api, agent)
    for target in (agent, "agt-nope"):
        calls: list[tuple[str, str, Any]] = [
            ("GET", f"/v1/agents/{target}/memory", None),
            ("GET", f"/v1/agents/{target}/memory/log", None),
            ("POST", f"/v1/agents/{target}/memory",
             {"expected": 1, "command": remember("seat", "Stolen.", "preference")}),
            ("POST", f"/v1/agents/{target}/memory", {"expected": 1, "command": forget("seat")}),
        ]
        for method, path, body in calls:
            response = other_org.http.request(method, path, json=body)
            assert_error(response, 404, "NotFound")
            assert "ACME-only" not in response.text
        assert_error(api.get("/v1/agents/agt-nope/memory"), 404, "NotFound")
    assert agent_memory(api, agent) == before
    assert agent_changes(graph) == 1


@pytest.mark.parametrize("authorization", [None, "Bearer obm_not-a-token", "Basic YW5hOng="])
def test_no_or_bad_token_is_401(
    api: Api, graph: Graph, server: RunningServer, authorization: str | None
) -> None:
    agent = api.agent()["id"]
    agent_remember(api, agent, "seat", "Ana prefers a window seat.", "preference")
    before = agent_memory(api, agent)
    headers = {} if authorization is None else {"Authorization": authorization}
    calls: list[tuple[str, str, Any]] = [
        ("GET", f"/v1/agents/{agent}/memory", None),
        ("GET", f"/v1/agents/{agent}/memory/log", None),
        ("POST", f"/v1/agents/{agent}/memory",
         {"expected": 1, "command": remember("tone", "Friendly.")}),
        ("POST", f"/v1/agents/{agent}/memory", {"expected": 1, "command": forget("seat")}),
    ]
    with httpx.Client(base_url=server.url, headers=headers, timeout=30) as anonymous:
        for method, path, body in calls:
            response = anonymous.request(method, path, json=body)
            assert_error(response, 401, "Unauthorized")  # section 5
            assert "window seat" not in response.text
    assert agent_memory(api, agent) == before
    assert agent_changes(graph) == 1

