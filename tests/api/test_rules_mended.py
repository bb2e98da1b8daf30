"""Rules that were read broken and are mended, each shown through HTTP (issue: hardening)."""

from __future__ import annotations

from tests.conftest import Api, Graph, user
from tests.openai_stub import OpenAIStub, Reply

STUB = "openai:test"


def test_a_turn_of_an_app_action_and_its_app_result_teaches_nothing(
    api: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # S8: no model ran in a turn that only ran an App action, its App's result included
    sid = api.session(model=STUB)["session"]["id"]
    api.turn(
        sid,
        {"type": "app_action", "role": "assistant", "content": "book(seat=12A)", "app": "air"},
        {"type": "tool_result", "role": "tool", "content": "booked 12A", "app": "air"},
    )
    assert api.wait_idle(sid) == []
    assert graph.value("MATCH (r:Run) RETURN count(r)") == 0
    assert openai_stub.requests == []
    # a tool result that is not an App's is the model's own step: that turn consolidates
    api.turn(sid, {"type": "tool_result", "role": "tool", "content": "42 rows"})
    assert [run["status"] for run in api.wait_idle(sid)] == ["succeeded"]


def test_a_direct_remember_with_a_credential_in_its_key_is_refused(api: Api) -> None:
    # S10 holds for keys too, as consolidation's check already did
    sid = api.session()["session"]["id"]
    for key in ("sk-proj-abcdefghijklmnopqrstuvwxyz0123456789", "password is Xk9!mP2qLz"):
        command = {"_tag": "Remember", "key": key, "content": "x", "kind": "fact"}
        response = api.command(sid, command)
        assert response.status_code == 400, response.text
        assert response.json()["field"] == "command.key"
    assert api.view(sid)["memory"]["entries"] == {}


def test_a_failed_runs_error_keeps_its_class_and_a_scrubbed_message(
    api: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    # S11: the error is recorded for every member to read: no provider URL, no key in it
    sid = api.session(model=STUB)["session"]["id"]
    leak = "upstream https://10.1.2.3:8443/v1 refused sk-proj-abcdefghijklmnopqrstuvwxyz0123"
    openai_stub.script(Reply(status=500, content=leak))
    api.turn(sid, user("Our budget is 1500 EUR."))
    [run] = api.wait_idle(sid)
    assert run["status"] == "failed"
    # our ModelError wraps the SDK's error, whose class the record keeps too
    assert run["error"].startswith("ModelError: InternalServerError: ")
    assert "refused" in run["error"]
    assert "10.1.2.3" not in run["error"]
    assert "sk-proj" not in run["error"]
    stored = graph.value("MATCH (r:Run) RETURN r.error")
    assert stored == run["error"]
