"""Consolidation reads only unprocessed items, in chunks under the prompt budget, so a
large backlog becomes several runs (never one prompt that fails again and again); and a run that
keeps nothing makes no new head."""

from __future__ import annotations

from collections.abc import Callable

from tests.conftest import Api, RunningServer, assistant, claims_nothing, user

SAID = [
    "I prefer window seats on every long flight we book together this year, please.",
    "We decided to stay three nights in Lisbon before taking the train on to Porto.",
    "Our budget is 3000 euros for the whole trip, hotels and trains and food included.",
    "I like small family hotels much more than the big chains near the airport.",
    "Remember that my sister joins us in Porto on the second weekend of the trip.",
    "I hate early trains, so nothing before nine in the morning if you can help it.",
]
BUDGET = 200


def test_a_backlog_larger_than_one_prompt_becomes_several_runs(
    api: Api, server: RunningServer, start_server: Callable[..., RunningServer]
) -> None:
    # S7, S9, S11: each run reads the oldest unprocessed items that fit the budget
    small = start_server(prompt_budget_chars=BUDGET)
    client = Api(small.url, api.token)
    try:
        with claims_nothing(server):  # only the small server's workers run
            sid = client.session()["session"]["id"]
            client.ok(client.command(sid, {"_tag": "Configure", "generate": False}))
            content: dict[str, str] = {}
            for said in SAID:
                turn = client.turn(sid, user(said), assistant("Noted."))
                for item_id, text in zip(turn["turn"]["items"], (said, "Noted."), strict=True):
                    content[item_id] = text
            assert client.wait_idle(sid) == []  # generate off: nothing ran (S11)

            client.ok(client.command(sid, {"_tag": "Configure", "generate": True}))
            client.ok(client.command(sid, {"_tag": "Refresh"}))
            runs = client.wait_idle(sid)

            assert len(runs) > 1
            assert {run["status"] for run in runs} == {"succeeded"}
            assert {run["trigger"] for run in runs} == {"refresh", "backlog"}
            oldest_first = sorted(runs, key=lambda run: run["queuedAt"])
            read = [item for run in oldest_first for item in run["read"]]
            assert read == list(content)  # every item read once, oldest first
            for run in runs:
                texts = [content[item] for item in run["read"]]
                assert len(texts) == 1 or sum(map(len, texts)) <= BUDGET, run
            memory = client.ok(client.get(f"/v1/sessions/{sid}/memory"))
            assert memory["processed"] == list(content)
            assert memory["entries"]  # the built-in model learned from the chunks
    finally:
        client.http.close()


def test_a_run_that_keeps_nothing_makes_no_new_head(api: Api) -> None:
    # S2, S7: the items join the processed ledger, the revision grows, the head stays
    sid = api.session()["session"]["id"]
    turn = api.turn(sid, user("Thanks, that is all."), assistant("You are welcome."))
    [run] = api.wait_idle(sid)
    assert run["status"] == "succeeded"
    assert run["kept"] == []
    assert run["read"] == turn["turn"]["items"]
    view = api.view(sid)
    assert view["session"]["head"] == turn["session"]["head"] == run["head"]
    assert view["session"]["revision"] == turn["session"]["revision"] + 1
    assert view["memory"]["processed"] == turn["turn"]["items"]
    versions = api.ok(api.get(f"/v1/sessions/{sid}/versions"))["versions"]
    assert [v["cause"] for v in versions if v["cause"] == "consolidation"] == []
    # the version's own memory (derived from its history) counts the items processed too
    [head] = [v for v in versions if v["id"] == view["session"]["head"]]
    at_head = api.ok(api.get(f"/v1/sessions/{sid}/versions/{head['id']}"))
    assert at_head["memory"]["processed"] == turn["turn"]["items"]
