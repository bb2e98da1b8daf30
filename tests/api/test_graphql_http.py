"""GraphQL over HTTP: `application/graphql-response+json` and its status codes, beside the
`application/json` answers older clients rely on."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.conftest import Api

MEDIA = "application/graphql-response+json"


def ask(api: Api, body: dict[str, Any], accept: str) -> tuple[int, str, dict[str, Any]]:
    response = api.post("/graphql", body, headers={"Accept": accept})
    answer: dict[str, Any] = response.json()
    return response.status_code, response.headers["content-type"], answer


def test_a_good_request_answers_200_in_the_media_type_asked_for(api: Api) -> None:
    status, media, answer = ask(api, {"query": "{ agents { nodes { id } } }"},
                                f"{MEDIA}, application/json")
    assert (status, media) == (200, MEDIA)
    assert answer == {"data": {"agents": {"nodes": []}}}


@pytest.mark.parametrize(
    ("why", "body"),
    [
        ("does not parse", {"query": "{ session(id: "}),
        ("does not validate", {"query": "{ nosuchfield }"}),
        ("variables do not coerce", {"query": "query($id: ID!) { session(id: $id) { id } }",
                                     "variables": {}}),
        ("variables of the wrong type",
         {"query": "query($n: Int!) { agents(first: $n) { nodes { id } } }",
          "variables": {"n": "many"}}),
    ],
)
def test_a_request_error_is_400_without_data(api: Api, why: str, body: dict[str, Any]) -> None:
    status, media, answer = ask(api, body, MEDIA)
    assert (status, media) == (400, MEDIA), (why, answer)
    assert "data" not in answer, why
    assert answer["errors"], why
    # older clients keep 200 and "data": null
    status, media, old = ask(api, body, "application/json")
    assert (status, media) == (200, "application/json")
    assert old["data"] is None
    assert old["errors"]


def test_a_field_error_keeps_200_and_its_data_entry(api: Api) -> None:
    # an operation that ran: its error names the field, and `data` is there (null)
    query = ('mutation { forget(sessionId: "ses-nope", expected: "v-0", revision: 0, key: "k")'
             " { id } }")
    status, media, answer = ask(api, {"query": query}, MEDIA)
    assert (status, media) == (200, MEDIA)
    assert "data" in answer
    assert answer["data"] is None
    [error] = answer["errors"]
    assert error["path"] == ["forget"]
    assert error["extensions"]["code"] == "NOT_FOUND"


BROKEN = "half \ud800 of a pair"  # JSON escapes it as \ud800: valid JSON, not text


@pytest.mark.parametrize(
    ("argument", "query"),
    [
        ("expected", """mutation($s: ID!, $r: Int!, $x: String!) {
            remember(sessionId: $s, expected: $x, revision: $r, key: "k", content: "c",
                     kind: FACT) { id } }"""),
        ("to", """mutation($s: ID!, $r: Int!, $x: String!) {
            revert(sessionId: $s, expected: "v", revision: $r, to: $x) { id } }"""),
        ("at", "mutation($s: ID!, $x: String) { fork(sessionId: $s, at: $x) { id } }"),
        ("id", "query($x: ID!) { session(id: $x) { id } }"),
        ("query", "query($x: String!) { search(query: $x) { hits { score } } }"),
    ],
)
def test_a_lone_surrogate_in_any_variable_is_a_request_error_naming_its_argument(
    api: Api, argument: str, query: str
) -> None:
    # Text storage cannot keep is refused before the operation runs, naming the argument the
    # variable fills, whichever argument it is; nothing is written.
    session = api.session()["session"]
    sessions = api.ok(api.get("/v1/sessions", params={"limit": 200}))["sessions"]
    variables = {"s": session["id"], "r": session["revision"], "x": BROKEN}
    body = {"query": query, "variables": {k: v for k, v in variables.items() if f"${k}" in query}}
    for accept, status in ((MEDIA, 400), ("application/json", 200)):
        # JSON escapes the lone surrogate as \ud800, as a client's JSON encoder would
        response = api.http.post("/graphql", content=json.dumps(body), headers={
            "content-type": "application/json", "accept": accept})
        answer = response.json()
        assert response.status_code == status, answer
        assert answer.get("data") is None
        [error] = answer["errors"]
        assert error["extensions"] == {
            "code": "VALIDATION_ERROR", "_tag": "ValidationError", "field": argument
        }
        assert "Unicode" in error["message"]
    after = api.view(session["id"])["session"]
    assert (after["revision"], after["head"]) == (session["revision"], session["head"])
    assert api.ok(api.get("/v1/sessions", params={"limit": 200}))["sessions"] == sessions


def test_an_unknown_operation_name_that_is_not_text_is_still_a_400(api: Api) -> None:
    # the refusal quotes the name it was given; its answer is valid JSON all the same
    body = {"query": "query A { __typename }", "operationName": "B\ud800"}
    response = api.http.post("/graphql", content=json.dumps(body), headers={
        "content-type": "application/json"})
    assert response.status_code == 400, response.text
    answer = response.json()
    assert answer["_tag"] == "ValidationError"
    assert "B\ud800" in answer["message"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"query": "query A { __typename }", "operationName": "B"}, "operationName"),
        ({"variables": {}}, "query"),
    ],
    ids=["unknown-name", "no-query"],
)
def test_a_request_graphql_cannot_run_names_the_part_at_fault(
    api: Api, body: dict[str, Any], field: str
) -> None:
    response = api.post("/graphql", body)
    assert response.status_code == 400, response.text
    answer = response.json()
    assert (answer["_tag"], answer["field"]) == ("ValidationError", field), answer


def test_a_get_whose_variables_are_no_json_names_that_parameter(api: Api) -> None:
    # a GET has no body: its `variables` (or `extensions`) that do not parse are a 400 on it
    for name in ("variables", "extensions"):
        response = api.get("/graphql", params={"query": "{ __typename }", name: "oops"})
        assert response.status_code == 400, response.text
        answer = response.json()
        assert (answer["_tag"], answer["field"], answer["message"]) == (
            "ValidationError", name, f"{name} is not valid JSON"), answer
    query = "query($f: Int) { agents(first: $f) { nodes { id } } }"
    good = api.get("/graphql", params={"query": query, "variables": '{"f": 1}'})
    assert good.json() == {"data": {"agents": {"nodes": []}}}


def test_a_document_of_several_operations_needs_an_operation_name(api: Api) -> None:
    # GraphQL's GetOperation: with more than one operation and no name, no operation runs
    body = {"query": "query A { __typename } query B { __typename }"}
    status, _, answer = ask(api, body, MEDIA)
    assert status == 400, answer
    assert "data" not in answer
    [error] = answer["errors"]
    assert error["extensions"] == {
        "code": "VALIDATION_ERROR", "_tag": "ValidationError", "field": "operationName"}
    status, _, old = ask(api, body, "application/json")
    assert (status, old["data"], old["errors"]) == (200, None, answer["errors"])
    named = ask(api, {**body, "operationName": "A"}, MEDIA)
    assert named[0] == 200
    assert named[2] == {"data": {"__typename": "Query"}}


def test_a_broken_variable_names_the_argument_of_the_operation_that_runs(api: Api) -> None:
    # two operations use $x for different arguments: the one named runs, so its argument is named
    query = ("query A($x: ID!) { session(id: $x) { id } } "
             "query B($x: String!) { search(query: $x) { hits { score } } }")
    body = {"query": query, "operationName": "B", "variables": {"x": BROKEN}}
    response = api.http.post("/graphql", content=json.dumps(body), headers={
        "content-type": "application/json", "accept": MEDIA})
    assert response.status_code == 400, response.text
    [error] = response.json()["errors"]
    assert error["extensions"]["field"] == "query"
