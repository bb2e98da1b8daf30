"""The source document's curl examples, run with the real `curl` (SPEC section 5: "the source's
curl examples work as written").

Each example is kept here as the document prints it. Only the host, and the head and revision
a real session has now in place of the document's `v-8e02`, `6`, ..., are replaced; the
`$OPENBOT_TOKEN` and `$SESSION` the document uses are set in curl's environment. Every example
runs against the in-process server and against `openbot-memory serve` started as a process.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.store.database import Target
from tests.conftest import Api, RunningServer, free_port, user
from tests.openai_stub import OpenAIStub, changes

HOST = "https://api.example.com"

READ_MEMORY = """curl -H "Authorization: Bearer $OPENBOT_TOKEN" \\
  https://api.example.com/v1/sessions/$SESSION/memory"""

DOCUMENTED_MEMORY = {
    "entries": {
        "budget": {
            "key": "budget",
            "content": "The trip budget is 1500 EUR.",
            "kind": "fact",
            "sources": ["i-02"],
            "updatedAt": 1792486800000,
            "status": "active",
        }
    },
    "processed": ["i-01", "i-02"],
    "settings": {"use": True, "generate": False},
    "overrides": {"generate": False},
}

REMEMBER_BODY = """{
  "expected": "v-7d21",
  "revision": 5,
  "command": {
    "_tag": "Remember",
    "key": "budget",
    "content": "The trip budget is 1500 EUR.",
    "kind": "fact"
  }
}"""

FORGET = """curl -H "Authorization: Bearer $OPENBOT_TOKEN" \\
  -H "Content-Type: application/json" \\
  -d '{"expected":"v-8e02","revision":6,"command":{"_tag":"Forget","key":"budget"}}' \\
  https://api.example.com/v1/sessions/$SESSION/memory"""

CONFIGURE_GENERATE_FALSE = """{
  "expected": "v-9f13",
  "revision": 7,
  "command": { "_tag": "Configure", "generate": false }
}"""

CONFIGURE_GENERATE_NULL = """{
  "expected": "v-9f13",
  "revision": 8,
  "command": { "_tag": "Configure", "generate": null }
}"""

REFRESH_BODY = """{ "expected": "v-9f13", "revision": 9, "command": { "_tag": "Refresh" } }"""


def posting(body: str) -> str:
    """A body example sent the way the document sends the Forget example."""
    return (
        'curl -H "Authorization: Bearer $OPENBOT_TOKEN" \\\n'
        '  -H "Content-Type: application/json" \\\n'
        f"  -d '{body}' \\\n"
        "  https://api.example.com/v1/sessions/$SESSION/memory"
    )


def with_values(example: str, expected: tuple[str, str], revision: tuple[str, str]) -> str:
    """The example with the document's head and revision replaced by real ones."""
    for old, new in (expected, revision):
        assert example.count(old) == 1, (old, example)
        example = example.replace(old, new)
    return example


class Curl:
    """Runs a document example with curl against one base URL, as one caller."""

    def __init__(self, base_url: str, token: str) -> None:
        self.base_url = base_url
        self.token = token
        self.binary = shutil.which("curl")
        assert self.binary is not None, "the curl examples need the curl binary"

    def run(self, example: str, session: str) -> tuple[int, Any]:
        assert example.startswith("curl ")
        assert HOST in example
        command = example.replace(HOST, self.base_url).replace(
            "curl ", f"{self.binary} -sS -w '\\n%{{http_code}}' ", 1
        )
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "OPENBOT_TOKEN": self.token,
            "SESSION": session,
            "NO_PROXY": "*",
            "no_proxy": "*",
        }
        done = subprocess.run(
            ["bash", "-c", command], env=env, capture_output=True, text=True, timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        body, _, status = done.stdout.rpartition("\n")
        return int(status), json.loads(body)


@pytest.fixture(scope="module")
def serve(
    neo4j_target: Target, openai_stub: OpenAIStub, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """`openbot-memory serve` as its own process, on the test run's Neo4j; its URL."""
    port = free_port()
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    env = {
        **os.environ,
        "NEO4J_URI": neo4j_target.uri,
        "NEO4J_USER": neo4j_target.user,
        "NEO4J_PASSWORD": neo4j_target.password,
        "OPENAI_BASE_URL": openai_stub.url,
        "OPENAI_API_KEY": "test-key",
        "OPENBOT_MEMORY_WORKER_POLL_SECONDS": "0.2",
        "OPENBOT_MEMORY_MODEL_RETRIES": "0",
        "OPENBOT_MEMORY_WARMUP_ROUNDS": "0",  # as the suite's servers (tests/conftest.py)
    }
    binary = Path(sys.executable).parent / "openbot-memory"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [str(binary), "serve", "--host", "127.0.0.1", "--port", str(port)],
            env=env, stdout=output, stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=url, timeout=2) as probe:
            for _ in range(600):  # up to a minute for the process to answer
                if process.poll() is not None:
                    raise RuntimeError(f"serve exited: {log.read_text()}")
                try:
                    if probe.get("/readyz").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                _pause(process)
            else:
                raise RuntimeError(f"serve did not become ready: {log.read_text()}")
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)


def _pause(process: subprocess.Popen[bytes]) -> None:
    """Wait a tenth of a second for the server, returning early if it exits."""
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=0.1)


@pytest.fixture(params=["in-process", "serve"])
def base_url(request: pytest.FixtureRequest, server: RunningServer) -> str:
    if request.param == "serve":
        return str(request.getfixturevalue("serve"))
    return server.url


@pytest.fixture
def client(api: Api, base_url: str) -> Iterator[Api]:
    """ana of acme, talking to the server under test."""
    there = Api(base_url, api.token)
    yield there
    there.http.close()


@pytest.fixture
def curl(api: Api, base_url: str) -> Curl:
    return Curl(base_url, api.token)


def documented_session(client: Api, stub: OpenAIStub) -> str:
    """A session whose memory is the document's example: a fact learned from i-02, after a turn
    of i-01 and i-02, with learning switched off for the session."""
    sid: str = client.session(model="openai:gpt-4o-mini")["session"]["id"]
    stub.script(
        changes(
            {"op": "remember", "key": "budget", "content": "The trip budget is 1500 EUR.",
             "kind": "fact", "sources": ["i-02"]}
        )
    )
    client.turn(sid, user("We plan a trip to Lisbon.", id="i-01"),
                user("The trip budget is 1500 EUR.", id="i-02"))
    client.wait_idle(sid)
    client.ok(client.command(sid, {"_tag": "Configure", "generate": False}))
    return sid


def head_and_revision(client: Api, sid: str) -> tuple[str, int]:
    session = client.view(sid)["session"]
    return session["head"], session["revision"]


def test_read_memory_answers_the_documented_view(
    client: Api, curl: Curl, openai_stub: OpenAIStub
) -> None:
    sid = documented_session(client, openai_stub)
    status, memory = curl.run(READ_MEMORY, sid)
    assert status == 200
    updated = memory["entries"]["budget"]["updatedAt"]
    assert isinstance(updated, int)
    assert updated > 1_600_000_000_000  # epoch milliseconds
    documented = json.loads(json.dumps(DOCUMENTED_MEMORY))
    documented["entries"]["budget"]["updatedAt"] = updated
    assert memory == documented


def test_the_documents_change_examples_in_order(client: Api, curl: Curl) -> None:
    sid = client.session()["session"]["id"]

    # Remember, with the head and revision the session has.
    head, revision = head_and_revision(client, sid)
    status, view = curl.run(posting(with_values(
        REMEMBER_BODY, ('"v-7d21"', json.dumps(head)), ('"revision": 5', f'"revision": {revision}')
    )), sid)
    assert status == 200, view
    assert set(view) == {"session", "memory"}
    assert view["session"]["id"] == sid
    assert view["session"]["revision"] == revision + 1  # "It has a new session.revision."
    assert view["session"]["head"] != head  # "Remember and Forget also make a new head."
    entry = view["memory"]["entries"]["budget"]
    assert (entry["content"], entry["kind"], entry["status"]) == (
        "The trip budget is 1500 EUR.", "fact", "active"
    )

    # Forget a fact.
    head, revision = head_and_revision(client, sid)
    status, view = curl.run(with_values(
        FORGET, ('"v-8e02"', json.dumps(head)), ('"revision":6', f'"revision":{revision}')
    ), sid)
    assert status == 200, view
    assert view["memory"]["entries"]["budget"]["status"] == "retracted"
    assert view["memory"]["entries"]["budget"]["content"] == "The trip budget is 1500 EUR."
    assert view["session"]["revision"] == revision + 1
    assert view["session"]["head"] != head

    # Keep using the facts, but stop learning new ones.
    head, revision = head_and_revision(client, sid)
    status, view = curl.run(posting(with_values(
        CONFIGURE_GENERATE_FALSE, ('"v-9f13"', json.dumps(head)),
        ('"revision": 7', f'"revision": {revision}'),
    )), sid)
    assert status == 200, view
    assert view["memory"]["settings"] == {"use": True, "generate": False}
    assert view["memory"]["overrides"] == {"generate": False}
    assert view["session"]["head"] == head  # "Configure does not change the history"
    assert view["session"]["revision"] == revision + 1

    # Follow the organization default for learning again.
    head, revision = head_and_revision(client, sid)
    status, view = curl.run(posting(with_values(
        CONFIGURE_GENERATE_NULL, ('"v-9f13"', json.dumps(head)),
        ('"revision": 8', f'"revision": {revision}'),
    )), sid)
    assert status == 200, view
    assert view["memory"]["settings"] == {"use": True, "generate": True}
    assert view["memory"]["overrides"] == {}
    assert view["session"]["head"] == head

    # The memory view reads the same afterwards.
    status, memory = curl.run(READ_MEMORY, sid)
    assert status == 200
    assert memory == view["memory"]


def test_refresh_as_written_learns_from_the_history(
    client: Api, curl: Curl, openai_stub: OpenAIStub
) -> None:
    sid = client.session(model="openai:gpt-4o-mini")["session"]["id"]
    client.ok(client.command(sid, {"_tag": "Configure", "generate": False}))
    client.turn(sid, user("We plan a trip to Lisbon.", id="i-01"),
                user("The trip budget is 1500 EUR.", id="i-02"))
    client.ok(client.command(sid, {"_tag": "Configure", "generate": None}))
    openai_stub.script(
        changes({"op": "remember", "key": "budget", "content": "The trip budget is 1500 EUR.",
                 "kind": "fact", "sources": ["i-02"]})
    )
    # The document's own values: Refresh "does not check expected and revision".
    status, view = curl.run(posting(REFRESH_BODY), sid)
    assert status == 200, view
    assert view["memory"]["processed"] == ["i-01", "i-02"]
    assert view["memory"]["entries"]["budget"]["sources"] == ["i-02"]
    assert view["memory"]["entries"]["budget"]["status"] == "active"
    assert view == client.view(sid)


def test_refresh_as_written_does_nothing_with_generate_off(
    client: Api, curl: Curl, openai_stub: OpenAIStub
) -> None:
    sid = client.session(model="openai:gpt-4o-mini")["session"]["id"]
    client.ok(client.command(sid, {"_tag": "Configure", "generate": False}))
    client.turn(sid, user("The trip budget is 1500 EUR.", id="i-01"))
    before = client.view(sid)
    status, view = curl.run(posting(REFRESH_BODY), sid)
    assert status == 200, view
    assert view == before == client.view(sid)
    assert openai_stub.requests == []


def test_refresh_as_written_without_a_model_is_409(client: Api, curl: Curl) -> None:
    client.ok(client.patch("/v1/org/settings", {"model": None}))
    sid = client.session()["session"]["id"]
    status, body = curl.run(posting(REFRESH_BODY), sid)
    assert status == 409
    assert body["_tag"] == "SessionConflict"


def test_the_documents_values_on_a_session_that_moved_on_are_409(
    client: Api, curl: Curl
) -> None:
    sid = client.session()["session"]["id"]
    before = client.view(sid)
    # "If the Session or its history changed since you read it, OpenBot returns 409."
    status, body = curl.run(posting(REMEMBER_BODY), sid)
    assert status == 409
    assert body["_tag"] == "SessionConflict"
    status, body = curl.run(FORGET, sid)
    assert status == 409
    assert body["_tag"] == "SessionConflict"
    assert client.view(sid) == before


def test_the_examples_without_the_token_are_401(client: Api, base_url: str) -> None:
    sid = client.session()["session"]["id"]
    anonymous = Curl(base_url, "")
    status, body = anonymous.run(READ_MEMORY, sid)
    assert status == 401
    assert body["_tag"] == "Unauthorized"
