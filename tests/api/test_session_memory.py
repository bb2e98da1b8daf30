"""Session memory through REST, rule by rule (SPEC S1-S4, S10, S12-S17, section 5).

Every test talks to the real server over HTTP and reads the real Neo4j afterwards where the
rule is about what is (or is not) written.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.conftest import Api, Graph, RunningServer, flat, user
from tests.openai_stub import OpenAIStub, changes

STUB_MODEL = "openai:gpt-4o-mini"  # served by the scripted OpenAI stub of the test run

Body = dict[str, Any]


def post_memory(api: Api, session_id: str, expected: Any, revision: Any, command: Body) -> Any:
    return api.post(
        f"/v1/sessions/{session_id}/memory",
        {"expected": expected, "revision": revision, "command": command},
    )


def remember(key: str, content: str, kind: str = "fact") -> Body:
    return {"_tag": "Remember", "key": key, "content": content, "kind": kind}


def forget(key: str) -> Body:
    return {"_tag": "Forget", "key": key}


def configure(**switches: bool | None) -> Body:
    return {"_tag": "Configure", **switches}


def head_and_revision(view: Body) -> tuple[str, int]:
    return view["session"]["head"], view["session"]["revision"]


def counts(graph: Graph) -> dict[str, int]:
    """What a write leaves behind: changes, items, versions, runs."""
    [row] = graph.rows(
        "RETURN COUNT { (:Change) } AS changes, COUNT { (:Item) } AS items, "
        "COUNT { (:Version) } AS versions, COUNT { (:Run) } AS runs, "
        "COUNT { (:Item {type: 'memory_edit'}) } AS edits"
    )
    return {name: int(value) for name, value in row.items()}


def snapshot(api: Api, graph: Graph, session_id: str) -> tuple[Body, dict[str, int]]:
    return api.view(session_id), counts(graph)


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


def edit_items(graph: Graph, session_id: str) -> list[Body]:
    """The memory-edit items on the session's timeline, oldest first."""
    return graph.rows(
        "MATCH (:Session {id: $id})-[:HEAD]->(:Version)-[:PARENT*0..]->(:Version)"
        "-[:ADDS]->(i:Item {type: 'memory_edit'}) "
        "RETURN i.id AS id, i.author AS author ORDER BY i.seq",
        id=session_id,
    )


# --- S1: an entry ------------------------------------------------------------------------


def test_an_entry_has_exactly_the_documented_fields(api: Api, graph: Graph) -> None:
    session = api.session()
    before = int(time.time() * 1000)
    view = api.remember(session["session"]["id"], "budget", "The trip budget is 1500 EUR.")
    after = int(time.time() * 1000)
    entry = view["memory"]["entries"]["budget"]
    [edit] = edit_items(graph, session["session"]["id"])
    # S1: {key, content, kind, sources, updatedAt, status}; updatedAt in epoch milliseconds.
    assert entry == {
        "key": "budget",
        "content": "The trip budget is 1500 EUR.",
        "kind": "fact",
        "sources": [edit["id"]],
        "updatedAt": entry["updatedAt"],
        "status": "active",
    }
    assert isinstance(entry["updatedAt"], int)
    assert before <= entry["updatedAt"] <= after


def test_every_kind_of_the_spec_is_accepted(api: Api) -> None:
    sid = api.session()["session"]["id"]
    kinds = ["fact", "decision", "preference", "procedure", "hypothesis"]  # S1
    for kind in kinds:
        api.remember(sid, f"k-{kind}", f"An entry of kind {kind}.", kind)
    entries = api.view(sid)["memory"]["entries"]
    assert {key: entry["kind"] for key, entry in entries.items()} == {
        f"k-{kind}": kind for kind in kinds
    }


@pytest.mark.parametrize("kind", ["opinion", "Fact", "", "facts"])
def test_a_kind_outside_the_spec_is_refused_and_nothing_is_written(
    api: Api, graph: Graph, kind: str
) -> None:
    sid = api.session()["session"]["id"]
    before = snapshot(api, graph, sid)
    head, revision = head_and_revision(before[0])
    response = post_memory(api, sid, head, revision, remember("mood", "Ana is happy.", kind))
    assert_error(response, 400, "ValidationError", "command.kind")  # S1
    assert snapshot(api, graph, sid) == before


# --- S2: the memory view -----------------------------------------------------------------


def test_memory_view_has_entries_processed_settings_and_overrides(
    api: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    sid = api.session(model=STUB_MODEL)["session"]["id"]
    openai_stub.script(
        changes(
            {
                "op": "remember",
                "key": "budget",
                "content": "The trip budget is 1500 EUR.",
                "kind": "fact",
                "sources": ["i-02"],
            }
        )
    )
    api.turn(sid, user("We plan a trip to Lisbon.", id="i-01"),
             user("The trip budget is 1500 EUR.", id="i-02"))
    api.wait_idle(sid)
    api.remember(sid, "hotel", "Ana booked the Hotel Avenida.")
    forgotten = api.ok(api.command(sid, forget("hotel")))

    memory = api.ok(api.get(f"/v1/sessions/{sid}/memory"))
    # S2: exactly these four fields; section 5: GET .../memory is the view's memory alone.
    assert set(memory) == {"entries", "processed", "settings", "overrides"}
    assert memory == forgotten["memory"] == api.view(sid)["memory"]
    assert memory["processed"] == ["i-01", "i-02"]  # what consolidation has read
    assert memory["entries"]["budget"]["sources"] == ["i-02"]
    assert memory["entries"]["budget"]["status"] == "active"
    # S2: entries include retracted entries.
    assert memory["entries"]["hotel"]["status"] == "retracted"
    assert memory["entries"]["hotel"]["content"] == "Ana booked the Hotel Avenida."
    assert memory["settings"] == {"use": True, "generate": True}
    assert memory["overrides"] == {}


def test_settings_show_what_is_in_force_and_overrides_only_what_the_session_set(
    api: Api,
) -> None:
    sid = api.session()["session"]["id"]
    api.ok(api.patch("/v1/org/settings", {"memory": {"use": False}}))
    view = api.ok(api.command(sid, configure(generate=False)))
    # S2: use comes from the org, generate from the session; overrides name only generate.
    assert view["memory"]["settings"] == {"use": False, "generate": False}
    assert view["memory"]["overrides"] == {"generate": False}


# --- S3: memory belongs to one session ---------------------------------------------------


def test_other_sessions_never_see_a_sessions_memory(api: Api) -> None:
    agent = api.agent()["id"]
    first = api.session(agent)["session"]["id"]
    second = api.session(agent)["session"]["id"]
    api.remember(first, "budget", "The trip budget is 1500 EUR.")
    third = api.session(agent)["session"]["id"]  # created after the edit

    for other in (second, third):  # S3: same agent, same person, still another session
        assert api.view(other)["memory"]["entries"] == {}
        assert api.ok(api.get(f"/v1/sessions/{other}/memory"))["entries"] == {}
        shown = api.ok(api.get(f"/v1/sessions/{other}/instructions"))
        assert "1500 EUR" not in shown["memory"]
        assert shown["included"]["session"] == []
        # A Forget there does not find the key: it is not that session's memory.
        assert_error(api.command(other, forget("budget")), 409, "SessionConflict")

    listed = api.ok(api.get("/v1/sessions", params={"agent": agent}))["sessions"]
    by_id = {view["session"]["id"]: view for view in listed}
    assert set(by_id[first]["memory"]["entries"]) == {"budget"}
    assert by_id[second]["memory"]["entries"] == {}
    assert by_id[third]["memory"]["entries"] == {}


# --- S4: switches follow the org default unless the session overrides them ---------------


def test_switches_follow_the_org_default_unless_the_session_overrides_them(api: Api) -> None:
    plain = api.session()["session"]["id"]
    custom = api.session()["session"]["id"]

    settings = api.ok(api.patch("/v1/org/settings", {"memory": {"generate": False}}))
    assert settings["memory"] == {"use": True, "generate": False}
    assert api.ok(api.get("/v1/org/settings"))["memory"] == {"use": True, "generate": False}
    assert api.view(plain)["memory"]["settings"] == {"use": True, "generate": False}
    assert api.view(plain)["memory"]["overrides"] == {}

    api.ok(api.command(custom, configure(generate=True)))
    assert api.view(custom)["memory"]["settings"] == {"use": True, "generate": True}

    api.ok(api.patch("/v1/org/settings", {"memory": {"use": False}}))
    # The default changes for every session that does not set the switch itself.
    assert api.view(plain)["memory"]["settings"] == {"use": False, "generate": False}
    assert api.view(custom)["memory"]["settings"] == {"use": False, "generate": True}
    assert api.view(custom)["memory"]["overrides"] == {"generate": True}

    api.ok(api.patch("/v1/org/settings", {"memory": {"use": True, "generate": True}}))
    api.ok(api.command(custom, configure(generate=False)))
    assert api.view(plain)["memory"]["settings"] == {"use": True, "generate": True}
    assert api.view(custom)["memory"]["settings"] == {"use": True, "generate": False}

    api.ok(api.patch("/v1/org/settings", {"memory": {"generate": False}}))
    newcomer = api.session()
    assert newcomer["memory"]["settings"] == {"use": True, "generate": False}
    assert newcomer["memory"]["overrides"] == {}


def test_use_off_by_org_default_keeps_memory_out_of_the_instructions(api: Api) -> None:
    sid = api.session()["session"]["id"]
    api.remember(sid, "budget", "The trip budget is 1500 EUR.")
    assert "1500 EUR" in api.ok(api.get(f"/v1/sessions/{sid}/instructions"))["memory"]
    api.ok(api.patch("/v1/org/settings", {"memory": {"use": False}}))  # S4 + S5
    shown = api.ok(api.get(f"/v1/sessions/{sid}/instructions"))
    assert "1500 EUR" not in shown["memory"]
    assert shown["included"]["session"] == []
    api.ok(api.command(sid, configure(use=True)))  # the session's override wins
    assert api.ok(api.get(f"/v1/sessions/{sid}/instructions"))["included"]["session"] == [
        "budget"
    ]


# --- S12: expected head and revision -----------------------------------------------------


def test_success_answers_the_new_session_view_with_a_new_revision(api: Api) -> None:
    created = api.session()
    sid = created["session"]["id"]
    head, revision = head_and_revision(created)
    response = post_memory(api, sid, head, revision, remember("budget", "1500 EUR in all."))
    answer = api.ok(response)
    # S12 + section 5: the answer is the Session view, the same one GET answers now.
    assert set(answer) == {"session", "memory"}
    assert answer == api.view(sid)
    assert answer["session"]["id"] == sid
    assert answer["session"]["revision"] == revision + 1
    assert answer["session"]["head"] != head
    assert answer["memory"]["entries"]["budget"]["content"] == "1500 EUR in all."


def test_a_stale_head_is_409_and_changes_nothing(api: Api, graph: Graph) -> None:
    sid = api.session()["session"]["id"]
    old_head, _ = head_and_revision(api.view(sid))
    api.remember(sid, "budget", "The trip budget is 1500 EUR.")
    api.ok(api.command(sid, configure(use=False)))
    before = snapshot(api, graph, sid)
    _, revision = head_and_revision(before[0])

    for stale in (old_head, "v-7d21", ""):
        for command in (
            remember("budget", "The trip budget is 900 EUR."),
            remember("hotel", "Hotel Avenida."),
            forget("budget"),
            configure(use=True, generate=False),
        ):
            response = post_memory(api, sid, stale, revision, command)
            assert_error(response, 409, "SessionConflict")  # S12
            assert snapshot(api, graph, sid) == before  # S12: nothing changes


def test_a_stale_revision_is_409_and_changes_nothing(api: Api, graph: Graph) -> None:
    sid = api.session()["session"]["id"]
    api.remember(sid, "budget", "The trip budget is 1500 EUR.")
    _, old_revision = head_and_revision(api.view(sid))
    api.ok(api.command(sid, configure(generate=False)))  # head stays, revision grows
    before = snapshot(api, graph, sid)
    head, revision = head_and_revision(before[0])
    assert revision == old_revision + 1

    for stale in (old_revision, revision + 1, 0, -1):
        for command in (
            remember("budget", "The trip budget is 900 EUR."),
            forget("budget"),
            configure(generate=True),
        ):
            response = post_memory(api, sid, head, stale, command)
            assert_error(response, 409, "SessionConflict")  # S12
            assert snapshot(api, graph, sid) == before


def test_each_success_moves_the_revision_by_one_and_old_values_go_stale(api: Api) -> None:
    sid = api.session()["session"]["id"]
    seen = [head_and_revision(api.view(sid))]
    for command in (
        remember("a", "Fact a."),
        configure(use=False),
        remember("b", "Fact b."),
        forget("a"),
        configure(use=None),
    ):
        head, revision = seen[-1]
        seen.append(head_and_revision(api.ok(post_memory(api, sid, head, revision, command))))
    assert [revision for _, revision in seen] == [0, 1, 2, 3, 4, 5]
    for head, revision in seen[:-1]:  # every earlier pair is stale now
        response = post_memory(api, sid, head, revision, remember("c", "Fact c."))
        assert_error(response, 409, "SessionConflict")
    assert set(api.view(sid)["memory"]["entries"]) == {"a", "b"}


def test_memory_of_an_unknown_session_is_404(api: Api) -> None:
    assert_error(api.get("/v1/sessions/ses-unknown"), 404, "NotFound")
    assert_error(api.get("/v1/sessions/ses-unknown/memory"), 404, "NotFound")
    response = post_memory(api, "ses-unknown", "v-1", 0, remember("a", "Fact a."))
    assert_error(response, 404, "NotFound")


# --- S13: Remember -----------------------------------------------------------------------


def test_remember_adds_then_replaces_the_entry_with_that_key(api: Api, graph: Graph) -> None:
    sid = api.session()["session"]["id"]
    first = api.remember(sid, "budget", "The trip budget is 1500 EUR.")
    second = api.remember(sid, "budget", "We decided on 2000 EUR.", "decision")
    entries = second["memory"]["entries"]
    assert list(entries) == ["budget"]  # S1: one key holds one fact
    assert entries["budget"]["content"] == "We decided on 2000 EUR."
    assert entries["budget"]["kind"] == "decision"
    assert entries["budget"]["status"] == "active"
    assert entries["budget"]["sources"] != first["memory"]["entries"]["budget"]["sources"]
    assert entries["budget"]["updatedAt"] >= first["memory"]["entries"]["budget"]["updatedAt"]
    # The record keeps both: the newer change replaces the older one.
    story = graph.rows(
        "MATCH (new:Change {key: 'budget'})-[:REPLACES]->(old:Change {key: 'budget'}) "
        "RETURN old.content AS old, new.content AS new, new.beforeContent AS before"
    )
    assert story == [
        {
            "old": "The trip budget is 1500 EUR.",
            "new": "We decided on 2000 EUR.",
            "before": "The trip budget is 1500 EUR.",
        }
    ]


def test_remember_brings_a_retracted_key_back(api: Api) -> None:
    sid = api.session()["session"]["id"]
    api.remember(sid, "budget", "The trip budget is 1500 EUR.")
    api.ok(api.command(sid, forget("budget")))
    view = api.remember(sid, "budget", "The trip budget is 1800 EUR.")
    assert view["memory"]["entries"]["budget"]["status"] == "active"  # S13
    assert view["memory"]["entries"]["budget"]["content"] == "The trip budget is 1800 EUR."
    shown = api.ok(api.get(f"/v1/sessions/{sid}/instructions"))
    assert shown["included"]["session"] == ["budget"]


def test_a_retracted_key_comes_back_only_through_remember(
    api: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    sid = api.session(model=STUB_MODEL)["session"]["id"]
    api.remember(sid, "budget", "The trip budget is 1500 EUR.")
    api.ok(api.command(sid, forget("budget")))
    openai_stub.script(
        changes(
            {
                "op": "remember",
                "key": "budget",
                "content": "The trip budget is 3000 EUR.",
                "kind": "fact",
                "sources": ["t-1"],
            }
        )
    )
    api.turn(sid, user("Actually the budget is 3000 EUR.", id="t-1"))
    [run] = api.wait_idle(sid)
    assert [dropped["key"] for dropped in run["dropped"]] == ["budget"]
    entry = api.view(sid)["memory"]["entries"]["budget"]
    # S13: consolidation cannot bring it back; it stays as the person left it.
    assert entry["status"] == "retracted"
    assert entry["content"] == "The trip budget is 1500 EUR."

    view = api.remember(sid, "budget", "The trip budget is 3000 EUR.")
    assert view["memory"]["entries"]["budget"]["status"] == "active"


# --- S14: Forget -------------------------------------------------------------------------


def test_forget_marks_the_entry_retracted_and_keeps_it_in_the_view(api: Api) -> None:
    sid = api.session()["session"]["id"]
    remembered = api.remember(sid, "budget", "The trip budget is 1500 EUR.", "decision")
    head, revision = head_and_revision(remembered)
    view = api.ok(post_memory(api, sid, head, revision, forget("budget")))
    entry = view["memory"]["entries"]["budget"]
    assert entry["status"] == "retracted"  # S14
    assert entry["content"] == "The trip budget is 1500 EUR."
    assert entry["kind"] == "decision"
    assert view["session"]["revision"] == revision + 1
    assert view["session"]["head"] != head  # S17: Forget makes a new head
    shown = api.ok(api.get(f"/v1/sessions/{sid}/instructions"))
    assert "1500 EUR" not in shown["memory"]  # S5: retracted entries are never sent
    assert shown["included"]["session"] == []


@pytest.mark.parametrize("key", ["nope", "budget-2", "budge"])
def test_forget_of_an_unknown_key_is_409_and_changes_nothing(
    api: Api, graph: Graph, key: str
) -> None:
    sid = api.session()["session"]["id"]
    api.remember(sid, "budget", "The trip budget is 1500 EUR.")
    before = snapshot(api, graph, sid)
    head, revision = head_and_revision(before[0])
    response = post_memory(api, sid, head, revision, forget(key))
    assert_error(response, 409, "SessionConflict")  # S14
    assert snapshot(api, graph, sid) == before


def test_forget_on_a_session_with_no_memory_is_409(api: Api, graph: Graph) -> None:
    sid = api.session()["session"]["id"]
    before = snapshot(api, graph, sid)
    assert_error(api.command(sid, forget("budget")), 409, "SessionConflict")  # S14
    assert snapshot(api, graph, sid) == before


# --- S15: Configure ----------------------------------------------------------------------


def test_configure_true_false_null_and_missing(api: Api, graph: Graph) -> None:
    sid = api.session()["session"]["id"]
    steps: list[tuple[Body, Body, Body]] = [
        # (command, overrides after, settings after); org defaults are both on.
        (configure(generate=False), {"generate": False}, {"use": True, "generate": False}),
        # use set, generate missing: generate's override stays.
        (configure(use=False), {"use": False, "generate": False},
         {"use": False, "generate": False}),
        # null removes the override: the org default applies again.
        (configure(generate=None), {"use": False}, {"use": False, "generate": True}),
        # nothing sent: nothing changes but the revision.
        (configure(), {"use": False}, {"use": False, "generate": True}),
        (configure(use=True, generate=True), {"use": True, "generate": True},
         {"use": True, "generate": True}),
        (configure(use=None, generate=None), {}, {"use": True, "generate": True}),
    ]
    view = api.view(sid)
    for command, overrides, settings in steps:
        head, revision = head_and_revision(view)
        view = api.ok(post_memory(api, sid, head, revision, command))
        assert view["memory"]["overrides"] == overrides, command  # S15
        assert view["memory"]["settings"] == settings, command
        assert view["session"]["head"] == head  # S15: Configure changes no history
        assert view["session"]["revision"] == revision + 1  # ... but the revision grows
        assert view == api.view(sid)
    # No history: no item, no new version, no entry change.
    assert counts(graph) == {"changes": 0, "items": 0, "versions": 1, "runs": 0, "edits": 0}


def test_configure_against_an_org_default_that_is_off(api: Api) -> None:
    sid = api.session()["session"]["id"]
    api.ok(api.patch("/v1/org/settings", {"memory": {"generate": False, "use": False}}))
    view = api.ok(api.command(sid, configure(generate=True)))
    assert view["memory"]["settings"] == {"use": False, "generate": True}
    view = api.ok(api.command(sid, configure(generate=None, use=True)))
    assert view["memory"]["settings"] == {"use": True, "generate": False}
    assert view["memory"]["overrides"] == {"use": True}
    view = api.ok(api.command(sid, configure(use=None)))
    assert view["memory"]["settings"] == {"use": False, "generate": False}
    assert view["memory"]["overrides"] == {}


def test_configure_keeps_memory_entries_as_they_are(api: Api) -> None:
    sid = api.session()["session"]["id"]
    remembered = api.remember(sid, "budget", "The trip budget is 1500 EUR.")
    view = api.ok(api.command(sid, configure(use=False, generate=False)))
    assert view["memory"]["entries"] == remembered["memory"]["entries"]
    assert view["memory"]["processed"] == remembered["memory"]["processed"]


# --- S16: Refresh ------------------------------------------------------------------------


@pytest.mark.parametrize("missing", ["expected", "revision"])
def test_refresh_without_expected_or_revision_is_400(
    api: Api, graph: Graph, missing: str
) -> None:
    sid = api.session()["session"]["id"]
    before = snapshot(api, graph, sid)
    head, revision = head_and_revision(before[0])
    body: Body = {"expected": head, "revision": revision, "command": {"_tag": "Refresh"}}
    del body[missing]
    response = api.post(f"/v1/sessions/{sid}/memory", body)
    assert_error(response, 400, "ValidationError", missing)  # S16: both must be sent
    assert snapshot(api, graph, sid) == before


def test_refresh_with_null_expected_or_revision_is_400(api: Api) -> None:
    sid = api.session()["session"]["id"]
    head, revision = head_and_revision(api.view(sid))
    refresh = {"_tag": "Refresh"}
    assert_error(post_memory(api, sid, None, revision, refresh), 400, "ValidationError",
                 "expected")
    assert_error(post_memory(api, sid, head, None, refresh), 400, "ValidationError", "revision")


def test_refresh_with_a_stale_head_and_revision_is_not_409(
    api: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    created = api.session(model=STUB_MODEL)
    sid = created["session"]["id"]
    old_head, old_revision = head_and_revision(created)
    api.ok(api.command(sid, configure(generate=False)))  # so the turn queues no run
    api.turn(sid, user("We plan a trip to Lisbon.", id="i-01"),
             user("The trip budget is 1500 EUR.", id="i-02"))
    api.ok(api.command(sid, configure(generate=None)))
    assert counts(graph)["runs"] == 0
    openai_stub.script(
        changes(
            {
                "op": "remember",
                "key": "budget",
                "content": "The trip budget is 1500 EUR.",
                "kind": "fact",
                "sources": ["i-02"],
            }
        )
    )
    # S16: Refresh does not compare expected and revision, so stale ones work.
    response = post_memory(api, sid, old_head, old_revision, {"_tag": "Refresh"})
    view = api.ok(response)
    assert view == api.view(sid)
    # It ran consolidation now, with the session's model.
    assert view["memory"]["entries"]["budget"]["sources"] == ["i-02"]
    assert view["memory"]["processed"] == ["i-01", "i-02"]
    assert [request["model"] for request in openai_stub.requests] == ["gpt-4o-mini"]
    response = post_memory(api, sid, "v-never-was", 12345, {"_tag": "Refresh"})
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("how", ["session", "org"])
def test_refresh_with_generate_off_does_nothing(
    api: Api, graph: Graph, openai_stub: OpenAIStub, how: str
) -> None:
    sid = api.session(model=STUB_MODEL)["session"]["id"]
    if how == "session":
        api.ok(api.command(sid, configure(generate=False)))
    else:
        api.ok(api.patch("/v1/org/settings", {"memory": {"generate": False}}))
    api.turn(sid, user("The trip budget is 1500 EUR.", id="i-01"))
    openai_stub.script(
        changes(
            {
                "op": "remember",
                "key": "budget",
                "content": "The trip budget is 1500 EUR.",
                "kind": "fact",
                "sources": ["i-01"],
            }
        )
    )
    before = snapshot(api, graph, sid)
    head, revision = head_and_revision(before[0])
    view = api.ok(post_memory(api, sid, head, revision, {"_tag": "Refresh"}))
    assert view == before[0]  # S16: nothing: same revision, no entries, nothing processed
    assert snapshot(api, graph, sid) == before
    assert before[1]["runs"] == 0
    assert openai_stub.requests == []  # the model was never asked


def test_refresh_with_no_model_is_409_and_changes_nothing(api: Api, graph: Graph) -> None:
    settings = api.ok(api.patch("/v1/org/settings", {"model": None}))
    assert settings["model"] is None
    agent = api.agent("no model")  # no model on the agent
    assert agent["model"] is None
    created = api.session(agent["id"])  # nor on the session
    sid = created["session"]["id"]
    assert created["session"]["model"] is None
    api.turn(sid, user("The trip budget is 1500 EUR.", id="i-01"))
    before = snapshot(api, graph, sid)
    head, revision = head_and_revision(before[0])
    response = post_memory(api, sid, head, revision, {"_tag": "Refresh"})
    assert_error(response, 409, "SessionConflict")  # S16
    assert snapshot(api, graph, sid) == before

    # With generate off there is nothing to do, so no model is needed either.
    view = api.ok(api.command(sid, configure(generate=False)))
    head, revision = head_and_revision(view)
    assert api.ok(post_memory(api, sid, head, revision, {"_tag": "Refresh"})) == view


def test_refresh_uses_the_agents_model_when_the_session_has_none(
    api: Api, openai_stub: OpenAIStub
) -> None:
    api.ok(api.patch("/v1/org/settings", {"model": None}))
    agent = api.agent("planner", model=STUB_MODEL)
    sid = api.session(agent["id"])["session"]["id"]
    api.ok(api.command(sid, configure(generate=False)))
    api.turn(sid, user("The trip budget is 1500 EUR.", id="i-01"))
    view = api.ok(api.command(sid, configure(generate=True)))
    openai_stub.script(changes())
    head, revision = head_and_revision(view)
    view = api.ok(post_memory(api, sid, head, revision, {"_tag": "Refresh"}))
    assert view["memory"]["processed"] == ["i-01"]
    assert [request["model"] for request in openai_stub.requests] == ["gpt-4o-mini"]


# --- S17: memory-edit items --------------------------------------------------------------


def test_remember_and_forget_add_a_memory_edit_item_that_is_the_source(
    api: Api, graph: Graph
) -> None:
    created = api.session()
    sid = created["session"]["id"]
    heads = [created["session"]["head"]]

    remembered = api.remember(sid, "budget", "The trip budget is 1500 EUR.")
    heads.append(remembered["session"]["head"])
    [first] = edit_items(graph, sid)
    assert first["author"] == "ana"
    assert remembered["memory"]["entries"]["budget"]["sources"] == [first["id"]]

    forgotten = api.ok(api.command(sid, forget("budget")))
    heads.append(forgotten["session"]["head"])
    edits = edit_items(graph, sid)
    assert len(edits) == 2
    assert edits[0] == first
    assert forgotten["memory"]["entries"]["budget"]["sources"] == [edits[1]["id"]]
    assert len(set(heads)) == 3  # S17: each edit makes a new head

    # The record: each change cites its edit item, was made by ana, and names the head and
    # revision it produced.
    record = graph.rows(
        "MATCH (c:Change)-[:CITES]->(i:Item), (c)-[:MADE_BY]->(p:Person) "
        "RETURN c.op AS op, i.id AS item, i.type AS type, p.id AS person, c.head AS head, "
        "c.revision AS revision ORDER BY c.revision"
    )
    assert record == [
        {"op": "remember", "item": edits[0]["id"], "type": "memory_edit", "person": "ana",
         "head": heads[1], "revision": 1},
        {"op": "forget", "item": edits[1]["id"], "type": "memory_edit", "person": "ana",
         "head": heads[2], "revision": 2},
    ]
    assert counts(graph)["changes"] == 2


def test_memory_edit_items_are_part_of_the_timeline(api: Api) -> None:
    sid = api.session()["session"]["id"]
    api.remember(sid, "budget", "The trip budget is 1500 EUR.")
    answer = api.turn(sid, user("Hello again."))
    api.wait_idle(sid)  # the turn's consolidation makes a head of its own
    api.ok(api.command(sid, forget("budget")))
    query = "query($id: ID!) { session(id: $id) { items { nodes { id type author } } } }"
    items = flat(api.graphql(query, id=sid))["data"]["session"]["items"]
    assert [item["type"] for item in items] == ["memory_edit", "message", "memory_edit"]
    assert len({item["id"] for item in items}) == 3  # ids stay unique in the session
    assert items[1]["id"] == answer["turn"]["items"][0]
    assert items[0]["author"] == items[2]["author"] == "ana"


def test_an_edit_item_skips_an_id_a_client_chose_for_its_place(api: Api) -> None:
    # S13, section 5: a client may choose item ids; a Remember's item then takes the branch's
    # next id only where no item has it already (a one-statement edit must look first).
    sid = api.session()["session"]["id"]
    answer = api.turn(sid, user("Our budget is 1500 EUR.", id="i-02"))
    assert answer["turn"]["items"] == ["i-02"]
    api.wait_idle(sid)
    remembered = api.remember(sid, "budget", "The trip budget is 1500 EUR.")
    [edit] = remembered["memory"]["entries"]["budget"]["sources"]
    forgotten = api.ok(api.command(sid, forget("budget")))
    [second] = forgotten["memory"]["entries"]["budget"]["sources"]
    query = "query($id: ID!) { session(id: $id) { items { nodes { id type } } } }"
    items = flat(api.graphql(query, id=sid))["data"]["session"]["items"]
    assert [item["type"] for item in items] == ["message", "memory_edit", "memory_edit"]
    assert [item["id"] for item in items] == ["i-02", edit, second]
    assert edit.startswith("i-02-")  # the second item's own id was taken by the client
    assert second == "i-03"
    assert forgotten["memory"]["entries"]["budget"]["status"] == "retracted"
    assert forgotten["memory"]["entries"]["budget"]["content"] == "The trip budget is 1500 EUR."


def test_an_edit_item_past_the_99th_takes_the_id_a_turn_would(api: Api) -> None:
    # S13: the edit's item id is the branch's next, as a turn's items are numbered (i-NN,
    # at least two digits), whether the statement or the service numbers it.
    sid = api.session()["session"]["id"]
    answer = api.turn(sid, *(user(f"Message {n}.") for n in range(99)))
    assert answer["turn"]["items"][-1] == "i-99"
    api.wait_idle(sid)
    remembered = api.remember(sid, "budget", "The trip budget is 1500 EUR.")
    assert remembered["memory"]["entries"]["budget"]["sources"] == ["i-100"]
    again = api.turn(sid, user("And one more."))
    assert again["turn"]["items"] == ["i-101"]


def test_an_edit_is_never_older_than_the_head_it_follows(api: Api, graph: Graph) -> None:
    # S6 orders entries by updatedAt, S17 versions by their time: an edit whose clock reading
    # came before the write it waited for (the head's) takes the head's time, not an older one
    sid = api.session()["session"]["id"]
    api.remember(sid, "budget", "The trip budget is 1500 EUR.")
    later = int(time.time() * 1000) + 60_000  # the head as another writer's clock left it
    graph.rows("MATCH (:Session {id: $sid})-[:HEAD]->(h:Version) SET h.at = $at", sid=sid,
               at=later)
    remembered = api.remember(sid, "seat", "Ana prefers window seats.")
    assert remembered["memory"]["entries"]["seat"]["updatedAt"] == later
    assert remembered["memory"]["entries"]["budget"]["updatedAt"] < later
    head = graph.value("MATCH (:Session {id: $sid})-[:HEAD]->(h:Version) RETURN h.at", sid=sid)
    assert head == later


# --- S10: a direct Remember of a credential ----------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        "The wifi password is hunter2!",
        "Ana's password for the booking site: Lisb0n-2024",
        "Use the key sk-proj-Abcdefghijklmnop1234567890 for billing.",
        "AWS access key AKIAIOSFODNN7EXAMPLE is used by the deploy job.",
        "The GitHub token is ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAwJ\n-----END RSA PRIVATE KEY-----",
        "Clone from https://deploy:s3cr3t-pw@git.example.com/team/repo.git",
        "The staging database is postgres://admin:Tr0ub4dor@db.internal:5432/app",
        "The report is at https://files.example.com/r.pdf?token=a8F3kQ9zLm2x",
        "The wifi password is still hunter2!",
        "The wifi key is Tr0ub4dor.",
        "The door code is 4711.",
        "Our passwords are Lisb0n-2024 and Port0-2025.",
        "Ana's password's hunter2.",
    ],
)
def test_remember_of_a_credential_is_400_and_nothing_is_stored(
    api: Api, graph: Graph, content: str
) -> None:
    sid = api.session()["session"]["id"]
    before = snapshot(api, graph, sid)
    head, revision = head_and_revision(before[0])
    response = post_memory(api, sid, head, revision, remember("access", content))
    assert_error(response, 400, "ValidationError", "command.content")  # S10
    assert snapshot(api, graph, sid) == before
    stored = graph.value(
        "MATCH (n) WHERE any(k IN keys(n) WHERE n[k] = $content) RETURN count(n)",
        content=content,
    )
    assert stored == 0


def test_ordinary_content_about_passwords_is_stored(api: Api) -> None:
    sid = api.session()["session"]["id"]
    content = "Ana prefers password managers over notes."  # no credential in it
    view = api.remember(sid, "tools", content, "preference")
    assert view["memory"]["entries"]["tools"]["content"] == content


# --- Bad bodies: 400 naming the field, nothing written -----------------------------------

BAD_BODIES: list[tuple[str, Callable[[str, int], Any], str]] = [
    ("expected is a number", lambda h, r: {"expected": 5, "revision": r,
                                           "command": forget("a")}, "expected"),
    ("revision is a string", lambda h, r: {"expected": h, "revision": str(r),
                                           "command": forget("a")}, "revision"),
    ("revision is a boolean", lambda h, r: {"expected": h, "revision": True,
                                            "command": forget("a")}, "revision"),
    ("revision is a float", lambda h, r: {"expected": h, "revision": r + 0.5,
                                          "command": forget("a")}, "revision"),
    ("no command", lambda h, r: {"expected": h, "revision": r}, "command"),
    ("command is a string", lambda h, r: {"expected": h, "revision": r,
                                          "command": "Remember"}, "command"),
    ("no _tag", lambda h, r: {"expected": h, "revision": r,
                              "command": {"key": "a", "content": "A.", "kind": "fact"}},
     "command"),
    ("unknown _tag", lambda h, r: {"expected": h, "revision": r,
                                   "command": {"_tag": "Teach", "key": "a"}}, "command"),
    ("Remember without key", lambda h, r: {"expected": h, "revision": r,
                                           "command": {"_tag": "Remember", "content": "A.",
                                                       "kind": "fact"}}, "command.key"),
    ("Remember without content", lambda h, r: {"expected": h, "revision": r,
                                               "command": {"_tag": "Remember", "key": "a",
                                                           "kind": "fact"}},
     "command.content"),
    ("Remember without kind", lambda h, r: {"expected": h, "revision": r,
                                            "command": {"_tag": "Remember", "key": "a",
                                                        "content": "A."}}, "command.kind"),
    ("key is a number", lambda h, r: {"expected": h, "revision": r,
                                      "command": {"_tag": "Remember", "key": 7, "content": "A.",
                                                  "kind": "fact"}}, "command.key"),
    ("content is a list", lambda h, r: {"expected": h, "revision": r,
                                        "command": {"_tag": "Remember", "key": "a",
                                                    "content": ["A."], "kind": "fact"}},
     "command.content"),
    ("empty key", lambda h, r: {"expected": h, "revision": r,
                                "command": remember("   ", "A.")}, "command.key"),
    ("empty content", lambda h, r: {"expected": h, "revision": r,
                                    "command": remember("a", "  ")}, "command.content"),
    ("Forget without key", lambda h, r: {"expected": h, "revision": r,
                                         "command": {"_tag": "Forget"}}, "command.key"),
    ("Configure use is a string", lambda h, r: {"expected": h, "revision": r,
                                                "command": {"_tag": "Configure", "use": "no"}},
     "command.use"),
    ("Configure generate is 0", lambda h, r: {"expected": h, "revision": r,
                                              "command": {"_tag": "Configure",
                                                          "generate": 0}}, "command.generate"),
    ("unknown command field", lambda h, r: {"expected": h, "revision": r,
                                            "command": {"_tag": "Forget", "key": "a",
                                                        "force": True}}, "command.force"),
    ("unknown top-level field", lambda h, r: {"expected": h, "revision": r,
                                              "command": forget("a"), "dryRun": True},
     "dryRun"),
    ("body is a list", lambda h, r: [{"expected": h, "revision": r}], "body"),
    ("body is null", lambda h, r: None, "body"),
]


@pytest.mark.parametrize(
    ("build", "field"), [(build, field) for _, build, field in BAD_BODIES],
    ids=[name for name, _, _ in BAD_BODIES],
)
def test_a_bad_memory_body_is_400_naming_the_field_and_nothing_is_written(
    api: Api, graph: Graph, build: Callable[[str, int], Any], field: str
) -> None:
    sid = api.session()["session"]["id"]
    api.remember(sid, "a", "Fact a.")
    before = snapshot(api, graph, sid)
    head, revision = head_and_revision(before[0])
    response = api.post(f"/v1/sessions/{sid}/memory", build(head, revision))
    assert_error(response, 400, "ValidationError", field)
    assert snapshot(api, graph, sid) == before


@pytest.mark.parametrize(
    "raw",
    [b'{"expected": "v-1", "revision": 0, "command": ', b"not json", b"", b"\xff\xfe{}",
     b'{"expected": "v-1", "revision": 0}}'],
)
def test_a_body_that_is_not_json_is_400_and_nothing_is_written(
    api: Api, graph: Graph, raw: bytes
) -> None:
    sid = api.session()["session"]["id"]
    before = snapshot(api, graph, sid)
    response = api.http.post(
        f"/v1/sessions/{sid}/memory", content=raw, headers={"content-type": "application/json"}
    )
    assert_error(response, 400, "ValidationError", "body")
    assert snapshot(api, graph, sid) == before


@pytest.mark.parametrize(
    ("command", "field"),
    [
        ('{"_tag": "Remember", "key": "a", "content": "Broken \\ud800 text.", "kind": "fact"}',
         "command.content"),
        ('{"_tag": "Remember", "key": "\\udfff", "content": "A.", "kind": "fact"}',
         "command.key"),
    ],
)
def test_text_that_is_not_unicode_is_400_naming_the_field(
    api: Api, graph: Graph, command: str, field: str
) -> None:
    """Valid JSON can still escape half of a surrogate pair: not text, so not storable."""
    sid = api.session()["session"]["id"]
    before = snapshot(api, graph, sid)
    head, revision = head_and_revision(before[0])
    raw = f'{{"expected": "{head}", "revision": {revision}, "command": {command}}}'
    response = api.http.post(
        f"/v1/sessions/{sid}/memory", content=raw.encode(),
        headers={"content-type": "application/json"},
    )
    assert_error(response, 400, "ValidationError", field)
    assert snapshot(api, graph, sid) == before


def test_bad_bodies_of_the_other_routes_name_the_field(api: Api, graph: Graph) -> None:
    assert_error(api.post("/v1/agents", {}), 400, "ValidationError", "name")
    assert_error(api.post("/v1/agents", {"name": 5}), 400, "ValidationError", "name")
    assert_error(api.post("/v1/agents", {"name": "x", "shared": "yes"}), 400,
                 "ValidationError", "shared")
    assert_error(api.post("/v1/sessions", {}), 400, "ValidationError", "agent")
    agent = api.agent()["id"]
    for kind in ("party", ""):  # a session kind is one the spec names, never empty
        assert_error(api.post("/v1/sessions", {"agent": agent, "kind": kind}), 400,
                     "ValidationError", "kind")
    assert_error(api.patch("/v1/org/settings", {"memory": {"use": "no"}}), 400,
                 "ValidationError", "memory.use")
    assert_error(api.patch("/v1/org/settings", {"agentMemory": 1}), 400,
                 "ValidationError", "agentMemory")
    assert_error(api.patch("/v1/org/settings", {"model": "gpt-4"}), 400,
                 "ValidationError", "model")
    # Nothing was written: one agent, no session, the org's defaults as they were.
    assert graph.value("MATCH (a:Agent) RETURN count(a)") == 1
    assert graph.value("MATCH (s:Session) RETURN count(s)") == 0
    assert api.ok(api.get("/v1/org/settings"))["memory"] == {"use": True, "generate": True}


def test_a_field_a_body_does_not_take_is_named_whatever_its_name(api: Api, graph: Graph) -> None:
    # Section 5's error rule: the 400 names the field at fault, also one named like a command
    # tag or ending in "Body"
    sid = api.session()["session"]["id"]
    item = {"type": "message", "role": "user", "content": "Hello."}
    for answer, field in (
        (api.post("/v1/agents", {"name": "desk", "Forget": True}), "Forget"),
        (api.patch("/v1/org/settings", {"memory": {"use": True, "Configure": 1}}),
         "memory.Configure"),
        (api.post(f"/v1/sessions/{sid}/turns", {"items": [{**item, "requestBody": 1}]}),
         "items.0.requestBody"),
        (api.command(sid, {"_tag": "Forget", "key": "k", "extraBody": 1}), "command.extraBody"),
        (api.command(sid, {"_tag": "Remember", "key": 5, "content": "c", "kind": "fact"}),
         "command.key"),
    ):
        assert_error(answer, 400, "ValidationError", field)
    assert graph.value("MATCH (a:Agent) RETURN count(a)") == 1
    assert graph.value("MATCH (t:Turn) RETURN count(t)") == 0


def test_a_model_name_is_short_printable_text_wherever_one_is_sent(
    api: Api, graph: Graph
) -> None:
    # A model's name is a label of the service's metrics and goes to the model server: one
    # of spaces only, with a control character or a line break, or over 200 characters is a
    # 400 on the field sending it, on every route that takes one, and nothing is written
    agent = api.agent()["id"]
    sid = api.session(agent)["session"]["id"]
    item = {"type": "message", "role": "user", "content": "Hello."}
    for name in ("openai:  ", "openai:gpt\u0000", "openai:" + "g" * 201, "openai:gpt-4o\n",
                 "openai:gpt\u2028"):
        for answer, field in (
            (api.post("/v1/agents", {"name": "desk", "model": name}), "model"),
            (api.post("/v1/sessions", {"agent": agent, "model": name}), "model"),
            (api.post(f"/v1/sessions/{sid}/turns", {"items": [item], "model": name}), "model"),
            (api.patch("/v1/org/settings", {"model": name}), "model"),
            (api.patch("/v1/org/settings", {"helperModel": name}), "helperModel"),
        ):
            assert_error(answer, 400, "ValidationError", field)
    assert graph.value("MATCH (a:Agent) RETURN count(a)") == 1
    assert graph.value("MATCH (s:Session) RETURN count(s)") == 1
    assert graph.value("MATCH (t:Turn) RETURN count(t)") == 0
    # a name of 200 characters, with the punctuation fine-tuned and hosted models use, or a
    # served model's own name with spaces, is one
    for name in ("openai:" + "g" * 200, "openai:ft:gpt-4o:acme::a1b2", "openai:meta-llama/L-3",
                 "openai:My Model"):
        assert api.ok(api.patch("/v1/org/settings", {"model": name}))["model"] == name


# --- Routes, methods, tokens -------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/v1/nope"), ("GET", "/"), ("POST", "/v1/sessions/x/remember"),
     ("GET", "/v1/sessions/x/memory/entries"), ("GET", "/v2/sessions")],
)
def test_an_unknown_route_is_404_json(api: Api, method: str, path: str) -> None:
    assert_error(api.http.request(method, path), 404, "NotFound")


@pytest.mark.parametrize(
    ("method", "path"),
    [("DELETE", "/v1/sessions/{id}/memory"), ("PUT", "/v1/sessions/{id}/memory"),
     ("PATCH", "/v1/sessions/{id}"), ("DELETE", "/v1/agents"), ("POST", "/v1/org/settings"),
     ("GET", "/v1/sessions/{id}/turns")],
)
def test_a_wrong_method_is_405_json(api: Api, graph: Graph, method: str, path: str) -> None:
    sid = api.session()["session"]["id"]
    api.remember(sid, "a", "Fact a.")
    before = snapshot(api, graph, sid)
    response = api.http.request(method, path.format(id=sid), json={})
    assert response.status_code == 405, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert isinstance(body["_tag"], str)
    assert isinstance(body["message"], str)
    assert snapshot(api, graph, sid) == before


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [("PUT", "/v1/agents", {"GET", "HEAD", "POST"}),
     ("PUT", "/v1/sessions/x", {"GET", "HEAD", "DELETE"}),
     ("POST", "/v1/org/settings", {"GET", "HEAD", "PATCH"})],
)
def test_a_405_allows_every_method_served_on_its_path(
    api: Api, method: str, path: str, allowed: set[str]
) -> None:
    # each method of a path is a route of its own: Allow names them all, not the first's
    response = api.http.request(method, path, json={})
    assert_error(response, 405, "MethodNotAllowed")
    assert set(response.headers["allow"].split(", ")) == allowed, response.headers["allow"]


@pytest.mark.parametrize(
    "authorization",
    [None, "Bearer", "Bearer obm_not-a-token", "Basic YW5hOnNlY3JldA==", "obm_x", "bearer x"],
)
def test_no_or_bad_token_is_401_on_every_call(
    api: Api, graph: Graph, server: RunningServer, authorization: str | None
) -> None:
    sid = api.session()["session"]["id"]
    api.remember(sid, "a", "Fact a.")
    before = snapshot(api, graph, sid)
    head, revision = head_and_revision(before[0])
    headers = {} if authorization is None else {"Authorization": authorization}
    calls: list[tuple[str, str, Any]] = [
        ("GET", f"/v1/sessions/{sid}", None),
        ("GET", f"/v1/sessions/{sid}/memory", None),
        ("POST", f"/v1/sessions/{sid}/memory",
         {"expected": head, "revision": revision, "command": remember("b", "Fact b.")}),
        ("POST", f"/v1/sessions/{sid}/memory",
         {"expected": head, "revision": revision, "command": {"_tag": "Refresh"}}),
        ("GET", "/v1/sessions", None),
        ("POST", "/v1/sessions", {"agent": before[0]["session"]["agent"]}),
        ("GET", "/v1/agents", None),
        ("POST", "/v1/agents", {"name": "intruder"}),
        ("GET", "/v1/org/settings", None),
        ("PATCH", "/v1/org/settings", {"memory": {"use": False}}),
        ("POST", "/graphql", {"query": "{ agents { nodes { id } } }"}),
    ]
    with httpx.Client(base_url=server.url, headers=headers, timeout=30) as anonymous:
        for method, path, body in calls:
            response = anonymous.request(method, path, json=body)
            assert_error(response, 401, "Unauthorized")
    assert snapshot(api, graph, sid) == before
    assert graph.value("MATCH (a:Agent) RETURN count(a)") == 1
    assert api.ok(api.get("/v1/org/settings"))["memory"] == {"use": True, "generate": True}


@pytest.mark.parametrize(
    "authorization", ["Bearer obm_not-a-token", "Basic YW5hOnNlY3JldA==", "bearer"]
)
def test_what_answers_everyone_answers_whatever_the_token(
    server: RunningServer, authorization: str
) -> None:
    # health checks and the API's description answer the same to everyone: a token sent with
    # them, good or not, is not looked at (a probe that carries one stays a health check)
    with httpx.Client(base_url=server.url, headers={"Authorization": authorization},
                      timeout=30) as client:
        assert client.get("/healthz").status_code == 200
        assert client.get("/readyz").status_code == 200
        described = client.get("/openapi.json")
        assert described.status_code == 200
        assert described.json()["openapi"].startswith("3.")
        assert client.get("/graphql/assets/graphiql.min.js").status_code == 200


@pytest.mark.parametrize("key", ["budget\x00", "a\u200bb", "line\nbreak"])
def test_a_key_with_control_or_invisible_characters_is_400(api: Api, key: str) -> None:
    # S1: a key is a stable name; characters no one can see or type make it unstable.
    sid = api.session()["session"]["id"]
    answer = api.command(sid, {"_tag": "Remember", "key": key, "content": "A.", "kind": "fact"})
    assert answer.status_code == 400
    assert answer.json()["_tag"] == "ValidationError"
    assert answer.json()["field"] == "command.key"
    assert api.view(sid)["memory"]["entries"] == {}


@pytest.mark.parametrize(
    ("query", "field"),
    [("offset=abc", "offset"), ("limit=0", "limit"), ("limit=abc", "limit"),
     ("offset=abc&limit=abc", "offset"), ("offset=-1", "offset")],
)
def test_a_bad_page_parameter_is_400_naming_it(api: Api, query: str, field: str) -> None:
    # Section 5: a ValidationError names the culprit, offset and limit each their own.
    assert_error(api.get(f"/v1/sessions?{query}"), 400, "ValidationError", field)


def test_each_key_is_one_entry_node_holding_all_its_changes(api: Api, graph: Graph) -> None:
    # Section 4: memory entries are nodes; every change of a key belongs to its entry.
    sid = api.session()["session"]["id"]
    api.remember(sid, "budget", "The trip budget is 1500 EUR.")
    api.remember(sid, "budget", "The trip budget is 2000 EUR.")
    api.ok(api.command(sid, {"_tag": "Forget", "key": "budget"}))
    api.remember(sid, "hotel", "The hotel is near the station.")
    rows = graph.rows(
        """
        MATCH (:Session {id: $sid})-[:HAS_ENTRY]->(e:Entry)<-[:OF_ENTRY]-(c:Change)
        WITH e, c ORDER BY c.at
        RETURN e.key AS key, collect(c.op) AS ops
        ORDER BY key
        """,
        sid=sid,
    )
    assert rows == [
        {"key": "budget", "ops": ["remember", "remember", "forget"]},
        {"key": "hotel", "ops": ["remember"]},
    ]


VERSIONS_PROCESSED = """query($id: ID!) { session(id: $id) {
  versions { nodes { id cause processed } } } }"""


def test_graphql_answers_each_versions_processed_items_as_rest_does(
    api: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # S2, section 5: what consolidation had read is part of the memory at every version, and
    # GraphQL reaches every view REST answers
    sid = api.session(model=STUB_MODEL)["session"]["id"]
    openai_stub.script(changes({"op": "remember", "key": "budget", "kind": "fact",
                                "content": "The trip budget is 1500 EUR.", "sources": ["p-2"]}))
    api.turn(sid, user("We plan a trip to Lisbon.", id="p-1"),
             user("The trip budget is 1500 EUR.", id="p-2"))
    api.wait_idle(sid)
    api.remember(sid, "hotel", "Ana booked the Hotel Avenida.")
    versions = flat(api.graphql(VERSIONS_PROCESSED, id=sid))["data"]["session"]["versions"]
    by_rest = {
        v["id"]: api.ok(api.get(f"/v1/sessions/{sid}/versions/{v['id']}"))["memory"]["processed"]
        for v in versions
    }
    assert {v["id"]: v["processed"] for v in versions} == by_rest
    assert {v["cause"]: v["processed"] for v in versions}["remember"] == ["p-1", "p-2"]
