"""Paging bounds: every position a client names is at most MAX_OFFSET, so no position plus a
page size overflows Neo4j's 64-bit integers; beyond it is a 400 naming the parameter, on REST
and GraphQL alike."""

from __future__ import annotations

import base64
import json
from typing import Any

from app.memory.paging import MAX_OFFSET
from tests.conftest import Api

INT64_MAX = 2**63 - 1


def refused(answer_status: int, body: dict[str, object], field: str) -> None:
    assert answer_status == 400, body
    assert body["_tag"] == "ValidationError"
    assert body["field"] == field


def test_every_rest_list_refuses_a_position_past_the_bound_and_serves_the_bound(api: Api) -> None:
    session = api.session()
    session_id, head = session["session"]["id"], session["session"]["head"]
    agent_id = session["session"]["agent"]
    lists = ["/v1/agents", "/v1/sessions", f"/v1/sessions/{session_id}/versions/{head}"]
    for path in lists:
        for offset in (INT64_MAX, MAX_OFFSET + 1, -1):
            answer = api.get(path, params={"offset": offset, "limit": 1})
            refused(answer.status_code, answer.json(), "offset")
        # the bound itself is served: an empty page, no overflow
        assert api.get(path, params={"offset": MAX_OFFSET, "limit": 200}).status_code == 200
    log = f"/v1/agents/{agent_id}/memory/log"
    answer = api.get(log, params={"after": INT64_MAX, "limit": 1})
    refused(answer.status_code, answer.json(), "after")
    assert api.ok(api.get(log, params={"after": MAX_OFFSET, "limit": 1})) == {"changes": []}


def _refused_on_after(answer: dict[str, Any]) -> None:
    [error] = answer["errors"]
    assert error["extensions"]["_tag"] == "ValidationError", answer
    assert error["extensions"]["field"] == "after"


def test_graphql_cursors_past_the_bound_are_refused_on_after(api: Api) -> None:
    api.session()
    hit = base64.urlsafe_b64encode(f"hit:{INT64_MAX - 1}".encode()).decode()
    answer = api.graphql(
        "query($after: String) { search(query: \"x\", after: $after) { hasNextPage } }",
        after=hit,
    )
    _refused_on_after(answer)
    # a keyset cursor with an integer Neo4j cannot hold
    raw = json.dumps({"v": 1, "l": "agents", "k": [2**70, "a"]}).encode()
    cursor = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    answer = api.graphql(
        "query($after: String) { agents(after: $after) { nodes { id } } }", after=cursor
    )
    _refused_on_after(answer)


def test_an_integer_parameter_is_written_in_ascii_digits(api: Api) -> None:
    # Python's int() reads "1_0" as 10, "+5" as 5 and an Arabic-Indic five as 5; the
    # parameter's schema is an integer: ASCII digits, with a minus sign for a negative one
    agent_id = api.session()["session"]["agent"]
    for bad in ("1_0", "+5", "٥", " 5", "5 ", "0x10", "5.0", ""):
        for path, name in (("/v1/sessions", "limit"), ("/v1/agents", "offset"),
                           (f"/v1/agents/{agent_id}/memory/log", "after")):
            answer = api.get(path, params={name: bad})
            refused(answer.status_code, answer.json(), name)
            assert answer.json()["message"] == f"{name} is an integer", bad
    # ASCII digits are served, leading zeros too
    assert api.get("/v1/sessions", params={"limit": "05", "offset": "0"}).status_code == 200
    refused(*_answer(api.get("/v1/agents", params={"offset": "-1"})), "offset")
    # past int()'s 4,300 digits, still the 64-bit refusal
    for many in ("9" * 5000, "-" + "9" * 5000):
        answer = api.get("/v1/sessions", params={"limit": many})
        refused(answer.status_code, answer.json(), "limit")
    assert api.get("/v1/sessions", params={"limit": "0" * 5000 + "1"}).status_code == 200


def _answer(response: Any) -> tuple[int, dict[str, object]]:
    return response.status_code, response.json()
