"""Forks and versions: memory follows the timeline (S3, S4, A7, Fork, Version)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from tests.conftest import Api, Graph, flat, user


def fork(api: Api, session_id: str, **body: Any) -> dict[str, Any]:
    answer: dict[str, Any] = api.ok(api.post(f"/v1/sessions/{session_id}/fork", body), 201)
    return answer


def revert(api: Api, session_id: str, to: str, **override: Any) -> Any:
    current = api.view(session_id)["session"]
    body = {"expected": current["head"], "revision": current["revision"], "to": to, **override}
    return api.post(f"/v1/sessions/{session_id}/revert", body)


def entries(view: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {k: (e["content"], e["status"]) for k, e in view["memory"]["entries"].items()}


def test_fork_at_head_copies_memory_and_overrides(api: Api) -> None:
    # S3, S4: a fork copies the memory and keeps the source's overrides.
    source = api.session()["session"]["id"]
    api.remember(source, "budget", "The trip budget is 1500 EUR.")
    api.ok(api.command(source, {"_tag": "Configure", "generate": False}))
    before = api.view(source)

    forked = fork(api, source)

    assert forked["session"]["forkedFrom"] == source
    assert forked["session"]["forkedAt"] == before["session"]["head"]
    assert forked["memory"]["entries"] == before["memory"]["entries"]
    assert forked["memory"]["overrides"] == {"generate": False}
    assert forked["memory"]["settings"] == {"use": True, "generate": False}


def test_fork_at_an_older_version_gets_that_versions_memory(api: Api) -> None:
    # Version: a fork at an older head has exactly the memory of that version.
    source = api.session()["session"]["id"]
    api.remember(source, "budget", "The trip budget is 1500 EUR.")
    old_head = api.view(source)["session"]["head"]
    api.remember(source, "budget", "The trip budget is 2000 EUR.")
    api.remember(source, "hotel", "The hotel is near the station.")
    api.ok(api.command(source, {"_tag": "Forget", "key": "budget"}))

    forked = fork(api, source, at=old_head)

    assert entries(forked) == {"budget": ("The trip budget is 1500 EUR.", "active")}
    items = api.ok(api.get(f"/v1/sessions/{forked['session']['id']}/versions"))["versions"]
    assert [v["cause"] for v in items] == ["fork"]
    assert items[0]["parent"] == old_head


def test_changes_after_a_fork_are_invisible_to_the_other_session(api: Api) -> None:
    # S3: the two sessions change independently.
    source = api.session()["session"]["id"]
    api.remember(source, "budget", "The trip budget is 1500 EUR.")
    forked = fork(api, source)["session"]["id"]

    api.remember(source, "hotel", "The hotel is near the station.")
    api.remember(forked, "flight", "The flight leaves at 9.")
    api.ok(api.command(forked, {"_tag": "Forget", "key": "budget"}))

    assert entries(api.view(source)) == {
        "budget": ("The trip budget is 1500 EUR.", "active"),
        "hotel": ("The hotel is near the station.", "active"),
    }
    assert entries(api.view(forked)) == {
        "budget": ("The trip budget is 1500 EUR.", "retracted"),
        "flight": ("The flight leaves at 9.", "active"),
    }


def test_fork_shares_items_and_links_copies_to_their_originals(api: Api, graph: Graph) -> None:
    # Section 4: from a forked entry, one query reaches the entry it was copied from and the
    # items that first supported it; items before the fork point are not duplicated.
    source = api.session()["session"]["id"]
    api.turn(source, user("Hello", id="u-1"))
    api.remember(source, "budget", "The trip budget is 1500 EUR.")
    forked = fork(api, source)["session"]["id"]
    assert api.view(forked)["memory"]["entries"]["budget"]["sources"] == ["i-02"]

    story = graph.rows(
        """
        MATCH (:Session {id: $fork})-[:HAS_ENTRY]->(:Entry {key: 'budget'})
              -[:COPIED_FROM]->(original:Entry)<-[:OF_ENTRY]-(first:Change)-[:CITES]->(item:Item)
        WHERE NOT (first)-[:REPLACES]->()
        RETURN original.session AS origin, first.maker AS maker, item.id AS item,
               item.type AS type
        """,
        fork=forked,
    )
    assert story == [
        {"origin": source, "maker": "person", "item": "i-02", "type": "memory_edit"}
    ]
    copy = graph.rows(
        "MATCH (:Entry {session: $fork, key: 'budget'})<-[:OF_ENTRY]-(c:Change) "
        "RETURN c.maker AS maker, c.op AS op",
        fork=forked,
    )
    assert copy == [{"maker": "fork", "op": "copy"}]
    assert graph.value("MATCH (i:Item {id: 'u-1'}) RETURN count(i)") == 1
    timeline = flat(api.graphql(
        "query($id: ID!) { session(id: $id) { items { nodes { id } } } }", id=forked
    ))["data"]["session"]["items"]
    assert [item["id"] for item in timeline] == ["u-1", "i-02"]


def test_a_fork_refuses_an_item_id_it_holds_from_its_source_as_used(
    api: Api, graph: Graph
) -> None:
    # section 5: item ids are unique in a session, a fork's copied history included; one sent
    # again in the fork is a 409 naming it (the fork has no turn of its own to answer), and
    # nothing is recorded
    sid = api.session()["session"]["id"]
    api.turn(sid, user("Our budget is 1500 EUR.", id="m-1"))
    api.wait_idle(sid)
    forked = fork(api, sid)["session"]["id"]
    before = api.view(forked)
    answer = api.post(f"/v1/sessions/{forked}/turns",
                      {"items": [user("Our budget is 1500 EUR.", id="m-1")]})
    assert answer.status_code == 409, answer.text
    assert answer.json()["_tag"] == "SessionConflict"
    assert "item ids already used in this session: m-1" in answer.json()["message"]
    assert api.view(forked) == before


def test_fork_of_unknown_version_or_foreign_session_is_404(api: Api, other_org: Api) -> None:
    source = api.session()["session"]["id"]
    missing = api.post(f"/v1/sessions/{source}/fork", {"at": "v-000000000000"})
    assert missing.status_code == 404
    assert missing.json()["_tag"] == "NotFound"
    foreign = other_org.post(f"/v1/sessions/{source}/fork", {})
    assert foreign.status_code == 404
    bad = api.post(f"/v1/sessions/{source}/fork", {"at": 5})
    assert bad.status_code == 400
    assert bad.json()["field"] == "at"


def test_revert_restores_memory_as_a_new_head(api: Api, graph: Graph) -> None:
    # Version: going back restores memory (a retracted entry is active again, an entry added
    # after the version is gone), makes a new head, and destroys nothing.
    session = api.session()["session"]["id"]
    api.remember(session, "budget", "The trip budget is 1500 EUR.")
    version = api.view(session)["session"]
    api.ok(api.command(session, {"_tag": "Forget", "key": "budget"}))
    api.remember(session, "hotel", "The hotel is near the station.")
    abandoned = api.view(session)["session"]["head"]

    reverted = api.ok(revert(api, session, version["head"]))

    assert entries(reverted) == {"budget": ("The trip budget is 1500 EUR.", "active")}
    assert reverted["session"]["head"] not in (version["head"], abandoned)
    assert reverted["session"]["revision"] == version["revision"] + 3
    versions = api.ok(api.get(f"/v1/sessions/{session}/versions"))["versions"]
    assert versions[-1] == {
        **versions[-1],
        "cause": "revert",
        "parent": version["head"],
        "revertedFrom": abandoned,
        "current": True,
    }
    # The abandoned branch is still there, readable.
    old = api.ok(api.get(f"/v1/sessions/{session}/versions/{abandoned}"))
    assert {k: e["status"] for k, e in old["memory"]["entries"].items()} == {
        "budget": "retracted",
        "hotel": "active",
    }
    assert graph.value("MATCH (c:Change {key: 'hotel'}) RETURN count(c)") == 1


def test_revert_to_an_abandoned_branch_and_item_ids_continue(api: Api) -> None:
    session = api.session()["session"]["id"]
    start = api.view(session)["session"]["head"]
    api.remember(session, "budget", "The trip budget is 1500 EUR.")
    with_budget = api.view(session)["session"]["head"]
    api.ok(revert(api, session, start))
    assert api.view(session)["memory"]["entries"] == {}
    # A new item on the new branch takes the next free id of that branch.
    api.remember(session, "hotel", "The hotel is near the station.")
    assert api.view(session)["memory"]["entries"]["hotel"]["sources"] == ["i-01"]
    # Going "forward" again to the abandoned branch.
    back = api.ok(revert(api, session, with_budget))
    assert set(back["memory"]["entries"]) == {"budget"}


def test_a_turn_a_revert_left_cannot_complete_until_the_session_is_back_on_its_branch(
    api: Api, graph: Graph
) -> None:
    # S7: a turn awaiting approval completes on the branch its first step is on; after a revert
    # to a version before it, its approval would follow a call the session's history no longer
    # has, so completing it is a conflict that writes nothing.
    session = api.session()["session"]["id"]
    start = api.view(session)["session"]["head"]
    recorded = api.turn(
        session,
        user("Book the 9:15 flight.", id="m-1"),
        {"type": "tool_call", "role": "assistant", "content": "book(LH1234)", "id": "c-1"},
        status="awaiting_approval",
    )
    first, with_turn = recorded["turn"], recorded["session"]["head"]
    api.ok(revert(api, session, start))
    before = api.view(session)["session"]
    approval = {"items": [{"type": "approval", "role": "user", "content": "approved",
                           "id": "a-1"}]}

    refused = api.post(f"/v1/sessions/{session}/turns/{first['id']}/complete", approval)

    assert refused.status_code == 409, refused.text
    assert refused.json()["_tag"] == "SessionConflict"
    assert "not on the session's branch" in refused.json()["message"]
    assert api.view(session)["session"] == before
    turn = api.ok(api.get(f"/v1/sessions/{session}/turns/{first['id']}"))["turn"]
    assert (turn["status"], turn["items"]) == ("awaiting_approval", ["m-1", "c-1"])
    assert graph.value("MATCH (i:Item {id: 'a-1', session: $s}) RETURN count(i)", s=session) == 0

    # Back on the turn's branch, it completes after its first step's items.
    api.ok(revert(api, session, with_turn))
    done = api.post(f"/v1/sessions/{session}/turns/{first['id']}/complete", approval)
    assert done.status_code == 200, done.text
    assert done.json()["turn"]["items"] == ["m-1", "c-1", "a-1"]
    assert done.json()["turn"]["status"] == "completed"
    api.wait_idle(session)


def test_revert_with_stale_head_or_revision_is_409_and_changes_nothing(api: Api) -> None:
    session = api.session()["session"]["id"]
    start = api.view(session)["session"]
    api.remember(session, "budget", "The trip budget is 1500 EUR.")
    before = api.view(session)

    stale_head = revert(api, session, start["head"], expected=start["head"])
    stale_revision = revert(api, session, start["head"], revision=start["revision"])

    for answer in (stale_head, stale_revision):
        assert answer.status_code == 409
        assert answer.json()["_tag"] == "SessionConflict"
    assert api.view(session) == before


def test_consolidation_after_revert_reads_only_the_current_branch(api: Api) -> None:
    # Version: after going back, items of the abandoned branch are not on the branch, and the
    # items before the version that were processed stay processed.
    session = api.session()["session"]["id"]
    api.turn(session, user("My name is Ana."))
    api.wait_idle(session)
    version = api.view(session)["session"]["head"]
    api.turn(session, user("Our budget is 900 EUR."))
    api.wait_idle(session)
    assert set(api.view(session)["memory"]["entries"]) == {"user-name", "budget"}

    api.ok(revert(api, session, version))
    api.turn(session, user("I prefer trains."))
    runs = api.wait_idle(session)

    view = api.view(session)
    assert set(view["memory"]["entries"]) == {"user-name", "prefers-trains"}
    assert runs[0]["read"] == ["i-02"]
    assert view["memory"]["processed"] == ["i-01", "i-02"]


def test_a_fork_during_writes_sees_one_whole_version(api: Api) -> None:
    # Concurrency: a fork taken while another writer changes the source never sees half of a
    # change: it names a head some write answered, with exactly the memory that write answered.
    # A fork that saw half a change would name a head no write reported, or other contents.
    created = api.session()["session"]
    source = created["id"]
    seen: dict[str, dict[str, str]] = {created["head"]: {}}  # head -> {key: content}
    statuses: list[int] = []
    stop = threading.Event()

    def write() -> None:
        n = 0
        # Until the forks are done, and at least three writes went through (at most 50 tries).
        while not stop.is_set() or (statuses.count(200) < 3 and len(statuses) < 50):
            n += 1
            answer = api.command(source, {"_tag": "Remember", "key": f"k{n % 5}",
                                          "content": f"v{n}", "kind": "fact"})
            statuses.append(answer.status_code)
            if answer.status_code == 200:
                view = answer.json()
                seen[view["session"]["head"]] = {
                    k: e["content"] for k, e in view["memory"]["entries"].items()
                }

    with ThreadPoolExecutor(2) as pool:
        writer = pool.submit(write)
        forks = [fork(api, source) for _ in range(8)]
        stop.set()
        writer.result()

    assert set(statuses) <= {200, 409}, statuses
    assert statuses.count(200) >= 3, statuses
    for forked in forks:
        at = forked["session"]["forkedAt"]
        assert at in seen, (at, sorted(seen))
        assert {k: e["content"] for k, e in forked["memory"]["entries"].items()} == seen[at]


def test_graphql_versions_fork_and_revert(api: Api) -> None:
    session = api.session()["session"]["id"]
    api.remember(session, "budget", "The trip budget is 1500 EUR.")
    first = api.view(session)["session"]
    api.remember(session, "hotel", "The hotel is near the station.")

    listed = flat(api.graphql(
        """query($id: ID!) { session(id: $id) { versions { nodes { id cause current
             entries { nodes { key content } } items { nodes { id type } } } } } }""",
        id=session,
    ))["data"]["session"]["versions"]
    assert [v["cause"] for v in listed] == ["start", "remember", "remember"]
    assert [len(v["entries"]) for v in listed] == [0, 1, 2]
    assert [len(v["items"]) for v in listed] == [0, 1, 2]
    assert [v["current"] for v in listed] == [False, False, True]

    forked = flat(api.graphql(
        "mutation($id: ID!, $at: String) { fork(sessionId: $id, at: $at) { id memory { entries { nodes { key } } } forkedFrom { id } } }",  # noqa: E501
        id=session,
        at=first["head"],
    ))["data"]["fork"]
    assert forked["memory"]["entries"] == [{"key": "budget"}]
    assert forked["forkedFrom"] == {"id": session}

    now = api.view(session)["session"]
    reverted = flat(api.graphql(
        """mutation($id: ID!, $e: String!, $r: Int!, $to: String!) {
             revert(sessionId: $id, expected: $e, revision: $r, to: $to) {
               memory { entries { nodes { key } } } } }""",
        id=session,
        e=now["head"],
        r=now["revision"],
        to=first["head"],
    ))["data"]["revert"]
    assert reverted["memory"]["entries"] == [{"key": "budget"}]
    stale = flat(api.graphql(
        """mutation($id: ID!, $e: String!, $r: Int!, $to: String!) {
             revert(sessionId: $id, expected: $e, revision: $r, to: $to) { id } }""",
        id=session,
        e=now["head"],
        r=now["revision"],
        to=first["head"],
    ))
    assert stale["errors"][0]["extensions"]["code"] == "SESSION_CONFLICT"
