"""S10 on every write path: credentials of every shape the service detects, planted in random
prose, sent through REST and GraphQL Remember (content and key), session consolidation, agent
memory Remember (REST and GraphQL) and agent learning; afterwards no node or relationship
property anywhere in the graph holds one."""

from __future__ import annotations

import json
import string
import time
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.memory.changes.credentials import credential_reason
from tests.api.test_consolidation import stored_anywhere
from tests.conftest import Api, Graph, assistant, flat, user
from tests.openai_stub import OpenAIStub, Reply

STUB = "openai:stub"
ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
WORDS = ("the", "trip", "budget", "is", "Ana", "said", "we", "book", "a", "window", "seat",
         "hotel", "near", "station", "on", "Friday", "remember", "this", "for", "next", "time",
         "please", "and", "then", "flight", "EUR", "1500", "ok")


def chars(alphabet: str, size: int) -> st.SearchStrategy[str]:
    return st.text(alphabet=alphabet, min_size=size, max_size=size)


# (the text planted, the part of it that must never be stored)
def _shape(template: str, marker: st.SearchStrategy[str]) -> st.SearchStrategy[tuple[str, str]]:
    return marker.map(lambda m: (template.format(m), m))


# a digit in the middle, so every marker is unlike any word of the prose
def _mixed(size: int) -> st.SearchStrategy[str]:
    return chars(ALNUM, size).map(lambda s: s[: size // 2] + "7" + s[size // 2 :])


CREDENTIALS: st.SearchStrategy[tuple[str, str]] = st.one_of(
    _shape("sk-{}", _mixed(32)),                                # OpenAI
    _shape("ghp_{}", _mixed(36)),                               # GitHub
    _shape("AKIA{}", chars(UPPER_DIGITS, 16)),                  # AWS access key id
    _shape("xoxb-{}", _mixed(24)),                              # Slack
    _shape("sk_live_{}", _mixed(24)),                           # Stripe
    _shape("glpat-{}", chars(ALNUM, 20)),                       # GitLab
    _mixed(20).map(lambda m: (f"eyJhbGciOiJIUzI1NiJ9.eyJ{m}.sIgNaTuRe{m}", m)),  # JWT
    _shape("https://ana:{}@example.com/x", _mixed(12)),         # URL with user:password
    _shape("https://example.com/cb?access_token={}", _mixed(20)),  # URL with a secret token
    _shape("the password is {}", _mixed(12)),                   # prose
    _shape("Bearer {}", _mixed(32)),                            # an Authorization header
    _shape("-----BEGIN RSA PRIVATE KEY-----\nMIIE{}\n-----END RSA PRIVATE KEY-----", _mixed(40)),
)
PROSE = st.lists(st.sampled_from(WORDS), min_size=0, max_size=12).map(" ".join)


@st.composite
def planted(draw: st.DrawFn) -> tuple[str, str, str]:
    """(prose with a credential in it, a key holding one, the markers' joined text)."""
    text, marker = draw(CREDENTIALS)
    before, after = draw(PROSE), draw(PROSE)
    key_text, key_marker = draw(CREDENTIALS.filter(lambda c: "\n" not in c[0] and " " not in c[0]))
    return f"{before} {text} {after}".strip(), f"note-{key_text}", f"{marker}\n{key_marker}"


class Counter:
    n = 0


def remember_cmd(key: str, content: str, kind: str = "fact") -> dict[str, Any]:
    return {"_tag": "Remember", "key": key, "content": content, "kind": kind}


def wait_all_finished(graph: Graph, jobs: int, timeout: float = 30) -> None:
    """Every run and learning job is over, and at least `jobs` learning jobs exist."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pending, learned = graph.rows(
            "OPTIONAL MATCH (r) WHERE (r:Run OR r:LearningJob) AND r.status IN ['queued', "
            "'running'] WITH count(r) AS pending OPTIONAL MATCH (j:LearningJob) "
            "RETURN pending, count(j) AS learned"
        )[0].values()
        if pending == 0 and learned >= jobs:
            return
        time.sleep(0.05)
    raise AssertionError("runs or learning jobs still pending")


def test_no_planted_credential_is_stored_on_any_write_path(
    api: Api, graph: Graph, openai_stub: OpenAIStub
) -> None:
    api.ok(api.patch("/v1/org/settings", {"helperModel": STUB, "model": STUB}))
    agent = api.agent("travel desk", shared=True)["id"]
    sid = api.session(agent)["session"]["id"]
    counter = Counter()
    planted_count = 0

    @settings(
        max_examples=15,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(planted())
    def attempt(example: tuple[str, str, str]) -> None:
        nonlocal planted_count
        prose, secret_key, markers = example
        assert credential_reason(prose) is not None, prose  # the strategy plants real ones
        assert credential_reason(secret_key) is not None, secret_key
        counter.n += 1
        n = counter.n
        planted_count += 2

        # S10: REST Remember, the content then the key, is 400 on that field
        for key, content, field in (("budget", prose, "command.content"),
                                    (secret_key, "The budget is 1500 EUR.", "command.key")):
            answer = api.command(sid, remember_cmd(key, content))
            assert answer.status_code == 400, answer.text
            assert answer.json()["field"] == field
        # GraphQL remember
        view = api.view(sid)["session"]
        for key, content in (("budget", prose), (secret_key, "The budget is 1500 EUR.")):
            result = flat(api.graphql(
                "mutation($s: ID!, $e: String!, $r: Int!, $k: String!, $c: String!) {"
                " remember(sessionId: $s, expected: $e, revision: $r, key: $k, content: $c,"
                " kind: FACT) { revision } }",
                s=sid, e=view["head"], r=view["revision"], k=key, c=content,
            ))
            assert result["errors"][0]["extensions"]["code"] == "VALIDATION_ERROR", result
        # agent memory Remember, REST and GraphQL
        version = api.ok(api.get(f"/v1/agents/{agent}/memory"))["version"]
        for key, content in (("refunds", prose), (secret_key, "Book refundable fares.")):
            answer = api.post(
                f"/v1/agents/{agent}/memory",
                {"expected": version, "command": remember_cmd(key, content, "procedure")},
            )
            assert answer.status_code == 400, answer.text
            result = flat(api.graphql(
                "mutation($a: ID!, $v: Int!, $k: String!, $c: String!) {"
                " rememberForAgent(agentId: $a, expected: $v, key: $k, content: $c,"
                " kind: PROCEDURE) { version } }",
                a=agent, v=version, k=key, c=content,
            ))
            assert result["errors"][0]["extensions"]["code"] == "VALIDATION_ERROR", result
        # consolidation and agent learning: the (scripted) models propose the credentials
        item = f"u-{n}"
        proposed: list[dict[str, Any]] = [
            {"op": "remember", "key": f"fact-{n}", "content": prose, "kind": "fact",
             "sources": [item]},
            {"op": "remember", "key": secret_key, "content": "The budget is 1500 EUR.",
             "kind": "fact", "sources": [item]},
        ]
        openai_stub.script_for("memory_changes", Reply(json.dumps({"changes": proposed})))
        learned = [{**change, "kind": "procedure", "key": str(change["key"]).replace("fact", "how")}
                   for change in proposed]
        openai_stub.script_for("agent_memory_changes", Reply(json.dumps({"changes": learned})))
        api.turn(sid, user("Always book refundable fares for me.", id=item),
                 assistant("Noted."))
        wait_all_finished(graph, jobs=n)

        for marker in markers.split("\n"):
            assert stored_anywhere(graph, marker) == 0, (marker, prose, secret_key)

    attempt()
    # the paths ran: every run and job read its turn and dropped both proposals, for S10
    runs = graph.rows("MATCH (r:Run) RETURN r.status AS status, r.dropped AS dropped")
    assert len(runs) == counter.n == 15
    assert all(run["status"] == "succeeded" and run["dropped"] == 2 for run in runs), runs
    jobs = graph.rows("MATCH (j:LearningJob) RETURN j.status AS status")
    assert len(jobs) == counter.n
    assert all(job["status"] == "succeeded" for job in jobs), jobs
    reasons = graph.rows("MATCH (d:DroppedChange) RETURN d.reason AS reason")
    assert len(reasons) >= 4 * counter.n, reasons
    assert planted_count == 30
    # and the scan finds what is stored: a kept fact, in its entry, change and memory-edit item
    api.remember(sid, "marker", "The marker is Q7xZp9.")
    assert stored_anywhere(graph, "Q7xZp9") >= 2
