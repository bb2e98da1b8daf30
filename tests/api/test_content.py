"""Content holds no control character (C0, DEL, C1) but tab and newline (S10's sane text):
a person's Remember with one is a 400 on `content` on every write path, and a model's change
with one is dropped with its reason, in consolidation and in learning alike."""

from __future__ import annotations

import json
import time
from typing import Any

from tests.conftest import Api, assistant, flat, user
from tests.openai_stub import OpenAIStub, Reply

STUB = "openai:test"
CONTROLLED = ["NUL\x00here", "an \x1b[31mescape", "a bell\x07", "a \r return", "DEL\x7f",
              "a C1 \x9b31m escape", "a next\x85line"]
ALLOWED = "Line one,\ttabbed.\nLine two."


def test_a_remember_with_a_control_character_is_refused_on_every_path(api: Api) -> None:
    agent = api.agent("travel desk", shared=True)["id"]
    sid = api.session(agent)["session"]["id"]
    version = api.ok(api.get(f"/v1/agents/{agent}/memory"))["version"]
    for content in CONTROLLED:
        # S10: REST, session memory and agent memory
        answer = api.command(
            sid, {"_tag": "Remember", "key": "note", "content": content, "kind": "fact"}
        )
        assert answer.status_code == 400, answer.text
        assert answer.json()["_tag"] == "ValidationError"
        assert answer.json()["field"] == "command.content"
        answer = api.post(
            f"/v1/agents/{agent}/memory",
            {"expected": version, "command": {"_tag": "Remember", "key": "note",
                                              "content": content, "kind": "procedure"}},
        )
        assert answer.status_code == 400, answer.text
        assert answer.json()["field"] == "command.content"
        # GraphQL, session memory and agent memory
        view = api.view(sid)["session"]
        result = flat(api.graphql(
            "mutation($s: ID!, $e: String!, $r: Int!, $c: String!) {"
            " remember(sessionId: $s, expected: $e, revision: $r, key: \"note\", content: $c,"
            " kind: FACT) { revision } }",
            s=sid, e=view["head"], r=view["revision"], c=content,
        ))
        [error] = result["errors"]
        assert error["extensions"]["_tag"] == "ValidationError", result
        assert error["extensions"]["field"] == "content"
        result = flat(api.graphql(
            "mutation($a: ID!, $v: Int!, $c: String!) {"
            " rememberForAgent(agentId: $a, expected: $v, key: \"note\", content: $c,"
            " kind: PROCEDURE) { version } }",
            a=agent, v=version, c=content,
        ))
        [error] = result["errors"]
        assert error["extensions"]["field"] == "content", result
    # nothing was written; tab and newline are content like any other
    assert api.view(sid)["memory"]["entries"] == {}
    assert api.ok(api.get(f"/v1/agents/{agent}/memory"))["version"] == version
    entries = api.remember(sid, "note", ALLOWED)["memory"]["entries"]
    assert entries["note"]["content"] == ALLOWED


def _change(key: str, content: str, kind: str) -> dict[str, Any]:
    return {"op": "remember", "key": key, "content": content, "kind": kind, "sources": ["u-1"]}


def test_a_models_change_with_a_control_character_is_dropped_with_its_reason(
    api: Api, openai_stub: OpenAIStub
) -> None:
    # S9: consolidation's and learning's changes pass the same content check
    api.ok(api.patch("/v1/org/settings", {"helperModel": STUB, "model": STUB}))
    agent = api.agent("travel desk", shared=True)["id"]
    sid = api.session(agent)["session"]["id"]
    openai_stub.script_for("memory_changes", Reply(json.dumps({"changes": [
        _change("seat", "Ana prefers\x1b[0m window seats.", "preference"),
        _change("budget", ALLOWED, "fact"),
    ]})))
    openai_stub.script_for("agent_memory_changes", Reply(json.dumps({"changes": [
        _change("dates", "Confirm the dates\x00 first.", "procedure"),
        _change("fares", ALLOWED, "procedure"),
    ]})))
    api.turn(sid, user("I prefer window seats; confirm dates first.", id="u-1"),
             assistant("Noted."))
    [run] = api.wait_idle(sid)
    deadline = time.monotonic() + 60
    jobs = api.wait_learned(agent)
    while not jobs and time.monotonic() < deadline:  # queued once the turn's run is over
        time.sleep(0.05)
        jobs = api.wait_learned(agent)
    assert run["status"] == "succeeded"
    assert [(d["key"], d["reason"]) for d in run["dropped"]] == [
        ("seat", "bad content: content has no control characters but tab and newline")]
    assert set(api.view(sid)["memory"]["entries"]) == {"budget"}
    [job] = jobs
    assert job["status"] == "succeeded"
    assert [(d["key"], d["reason"]) for d in job["dropped"]] == [
        ("dates", "bad content: content has no control characters but tab and newline")]
    assert set(api.ok(api.get(f"/v1/agents/{agent}/memory"))["entries"]) == {"fares"}
