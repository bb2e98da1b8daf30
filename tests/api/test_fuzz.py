"""Fuzzing against a live server: schemathesis over REST (from `/openapi.json`) and GraphQL (from
the served schema), with all of schemathesis' checks, and random JSON bodies on every REST route
that takes one. Whatever is sent: no 5xx, no stack trace in a body, and every error has the
service's shape (`{"_tag", "message"}` over REST, `extensions.code` over GraphQL). Every REST
answer, success or error, has the shape `/openapi.json` gives its status
(`response_schema_conformance`, over every operation)."""

from __future__ import annotations

import dataclasses
import json
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from pydantic import BaseModel
from schemathesis import GenerationMode
from schemathesis.checks import CheckContext, not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.specs.openapi.checks import (
    positive_data_acceptance,
    response_schema_conformance,
)

from app.api.bookmarks import HEADER as BOOKMARK
from app.api.graphql.limits import TOO_COSTLY, TOO_DEEP, TOO_LARGE
from app.api.openapi import Operation
from app.api.rest import routes
from app.errors import ServiceError
from tests.conftest import Api, Graph, RunningServer, user

REST_CASES = 1000  # at least, over all operations and both generation modes
GRAPHQL_CASES = 1000
TRACEBACK = re.compile(r"Traceback \(most recent call last\)|File \"[^\"]+\.py\", line \d+")


def fuzz_settings(examples: int) -> settings:
    """Fast and repeatable: a fixed derandomized run, no shrinking, no example database."""
    return settings(
        max_examples=examples,
        derandomize=True,
        deadline=None,
        database=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )


@dataclass
class Findings:
    """What the fuzzing saw: cases per operation, statuses, and anything that broke a rule."""

    cases: Counter[str] = field(default_factory=Counter)
    statuses: Counter[int] = field(default_factory=Counter)
    broken: list[str] = field(default_factory=list)
    no_negative: list[str] = field(default_factory=list)  # operations with no invalid input
    conformed: Counter[str] = field(default_factory=Counter)  # answers checked against schemas
    succeeded: Counter[str] = field(default_factory=Counter)  # cases answered 2xx, no errors

    def total(self) -> int:
        return sum(self.cases.values())

    def server_errors(self) -> int:
        return sum(n for status, n in self.statuses.items() if status >= 500)

    def reach(self) -> str:
        """One line per operation: how many of its generated cases were answered 2xx (for GraphQL,
    with no error)."""
        width = max(len(label) for label in self.cases)
        return "\n".join(f"  {label:<{width}}  {self.succeeded[label]:>4} of {n:>4} 2xx"
                         for label, n in sorted(self.cases.items()))


def rest_shape(status: int, text: str) -> str | None:
    """What is wrong with a REST answer, or None: no 5xx, no traceback, errors are `_tag`ged."""
    if status >= 500:
        return f"{status}: {text[:300]}"
    if TRACEBACK.search(text):
        return f"a traceback in the body: {text[:300]}"
    if status >= 400:
        try:
            body = json.loads(text)
        except ValueError:
            return f"{status} that is not JSON: {text[:200]}"
        if not (isinstance(body, dict) and isinstance(body.get("_tag"), str)
                and isinstance(body.get("message"), str)):
            return f"{status} without the error shape: {text[:200]}"
    return None


def graphql_shape(status: int, text: str) -> str | None:
    """What is wrong with a GraphQL answer, or None: every error carries `extensions.code`,
    or is GraphQL's own (it has `locations`: a document that does not parse or validate)."""
    problem = rest_shape(status, text) if status != 200 else None
    if problem or status != 200:
        return problem
    if TRACEBACK.search(text):
        return f"a traceback in the body: {text[:300]}"
    for error in json.loads(text).get("errors") or []:
        code = (error.get("extensions") or {}).get("code")
        if code is None and "locations" not in error:
            return f"an error with no code: {error}"
        if code == "INTERNAL" or error.get("message") == "Unexpected error.":
            return f"an unexpected (masked) error: {error}"
    return None


# Unknown query parameters are ignored, as HTTP APIs do (a client may add a cache-buster), so
# none is generated; the token is the session's, not a generated header, and `ignored_auth` checks
# that each route refuses a missing or wrong one.
CONFIG = schemathesis.Config.from_dict(
    {"generation": {"allow-extra-parameters": False, "with-security-parameters": False}}
)


# Rules the service keeps that no JSON Schema can say; the 400 description in /openapi.json
# names them. A schema-valid case refused for one of these is not held against the document.
BEYOND_SCHEMA = re.compile(
    r"memory never stores credentials|no control or invisible characters|a lone surrogate"
    r"|about|no person|parent|is not a version|a subagent session is started"
    r"|item ids are unique within a turn|not a bookmark this service gave"
    r"|not valid Lucene query syntax"
)


def beyond_schema(response: schemathesis.Response) -> list[Any]:
    """positive_data_acceptance, excluded for this answer only when it is a 400 for one of the
    rules in BEYOND_SCHEMA; every other check always runs."""
    if response.status_code != 400:
        return []
    try:
        message = str(json.loads(response.content).get("message", ""))
    except (ValueError, AttributeError):
        return []
    return [positive_data_acceptance] if BEYOND_SCHEMA.search(message) else []


# A GraphQL answer whose every error carries one of these codes is the client's to act on: a
# ServiceError (NOT_FOUND for a generated id, VALIDATION_ERROR naming its field, a conflict) or
# a documented limit. Schemathesis knows only Apollo's and graphql-java's codes, so it takes any
# error of a resolver for a server error; for these answers `graphql_shape` judges instead (a
# masked error or INTERNAL code fails it), and positive_data_acceptance is not asked.
CLIENT_CODES = {cls.code for cls in ServiceError.__subclasses__()} | {
    TOO_LARGE, TOO_COSTLY, TOO_DEEP}


def client_errors_only(response: schemathesis.Response) -> list[Any]:
    """not_a_server_error and positive_data_acceptance, for an answer of client errors only."""
    try:
        errors = json.loads(response.content).get("errors") or []
    except (ValueError, AttributeError):
        return []
    codes = {(error.get("extensions") or {}).get("code") for error in errors}
    if response.status_code == 200 and errors and codes <= CLIENT_CODES:
        return [not_a_server_error, positive_data_acceptance]
    return []


@pytest.fixture
def http(api: Api) -> Iterator[requests.Session]:
    """A requests session (schemathesis' transport) carrying ana's token."""
    with requests.Session() as session:
        session.headers["Authorization"] = f"Bearer {api.token}"
        yield session


@dataclass(frozen=True)
class Real:
    """What real objects give an operation's cases: path parameters, and body fields."""

    path: dict[str, str] = field(default_factory=dict)
    body: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)


def with_fields(fields: dict[str, str]) -> Callable[[schemathesis.Case[Any]], Any]:
    """A case with `fields` set in its body, when its body is an object."""
    def put(case: schemathesis.Case[Any]) -> schemathesis.Case[Any]:
        if isinstance(case.body, dict):
            case.body = {**case.body, **fields}
        return case
    return put


def fuzz(
    schema: schemathesis.BaseSchema,
    http: requests.Session,
    cases: int,
    fixed: Callable[[str, str], Real | None],
    shape: Callable[[int, str], str | None],
    excused: Callable[[schemathesis.Response], list[Any]],
) -> Findings:
    """Each operation of `schema` in both generation modes, about `cases` in all (fewer where an
    operation's inputs run out); with `fixed(method, path)`'s path parameters (and, for valid
    cases, body fields) for half of them, so cases reach real objects and not only 404s."""
    found = Findings()
    operations = [result.ok() for result in schema.get_all_operations()]  # type: ignore[union-attr]
    examples = -(-cases * 3 // 2 // (2 * len(operations)))  # half more: some run out early

    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            strategies = [operation.as_strategy(mode)]
            real = fixed(operation.method.upper(), operation.path)
            if real:
                strategy = operation.as_strategy(mode, path_parameters=real.path or None,
                                                 headers=real.headers or None)
                if real.body and mode is GenerationMode.POSITIVE:
                    strategy = strategy.map(with_fields(real.body))
                strategies.append(strategy)
            run = fuzz_settings(examples)(given(case=st.one_of(strategies))(
                lambda case: check(case, http, shape, excused, found)))
            try:
                run()
            except Unsatisfiable:
                # no input breaks this operation's schema (GET /healthz has none to break)
                assert mode is GenerationMode.NEGATIVE, operation.label
                found.no_negative.append(operation.label)
    return found


def _has_errors(response: schemathesis.Response) -> bool:
    """Whether an answer carries GraphQL `errors` (a GraphQL answer with them is no success)."""
    try:
        body = json.loads(response.content)
    except ValueError:
        return False
    return isinstance(body, dict) and bool(body.get("errors"))


def check(
    case: schemathesis.Case[Any],
    http: requests.Session,
    shape: Callable[[int, str], str | None],
    excused: Callable[[schemathesis.Response], list[Any]],
    found: Findings,
) -> None:
    """Send one case, run all of schemathesis' checks on the answer, then the service's own."""
    label = case.operation.label
    found.cases[label] += 1
    response = case.call(session=http, timeout=60)
    found.statuses[response.status_code] += 1
    if 200 <= response.status_code < 300 and not _has_errors(response):
        found.succeeded[label] += 1

    def conformance(
        ctx: CheckContext, response: schemathesis.Response, case: schemathesis.Case[Any]
    ) -> bool | None:
        """response_schema_conformance, counted per operation."""
        found.conformed[label] += 1
        return response_schema_conformance(ctx, response, case)

    try:
        case.validate_response(
            response, additional_checks=[conformance],
            excluded_checks=[*excused(response), response_schema_conformance],
            transport_kwargs={"session": http, "timeout": 60},
        )
    except FailureGroup as failures:
        found.broken.append(f"{label}: {failures}")
    problem = shape(response.status_code, response.content.decode(errors="replace"))
    if problem:
        found.broken.append(f"{label}: {problem}")


def report(found: Findings) -> str:
    """One line per kind of failure (operation, schemathesis code), then the first of each."""
    first: dict[tuple[str, str], str] = {}
    for text in found.broken:
        codes = re.findall(r"- (ST\d+ [^\n]*)", text)
        first.setdefault((text.split(":")[0], codes[0] if codes else text[:120]), text)
    return "\n\n".join(f"{kind}\n{text[:1500]}" for kind, text in first.items())


def follow(expression: str, path: dict[str, str], body: Any) -> str | None:
    """An OpenAPI link's runtime expression, for a request's path parameters and its answer
    (None where the answer has no such field: a turn's `run` is there with `?wait` only)."""
    if expression.startswith("$request.path."):
        return path[expression.removeprefix("$request.path.")]
    pointer = expression.removeprefix("$response.body#")
    assert pointer != expression, expression
    for part in pointer.strip("/").split("/"):
        if not isinstance(body, dict) or part not in body:
            return None
        body = body[part]
    return str(body)


def linked(document: dict[str, Any], made: list[tuple[str, str, dict[str, str], Any]]
           ) -> dict[tuple[str, str], Real]:
    """The path parameters and body fields of each operation (by method and path) that the
    links of /openapi.json give, followed from the answers of real requests: (method, path,
    path parameters, answer); a later answer's link replaces an earlier one's."""
    by_id = {op["operationId"]: (method.upper(), path)
             for path, ops in document["paths"].items() for method, op in ops.items()}
    found: dict[tuple[str, str], Real] = {}
    for method, path, params, body in made:
        operation = document["paths"][path][method.lower()]
        for answer in operation["responses"].values():
            for link in answer.get("links", {}).values():
                values = [{name: follow(expression, params, body)
                           for name, expression in link.get(part, {}).items()}
                          for part in ("parameters", "requestBody")]
                if any(None in each.values() for each in values):
                    continue
                found[by_id[link["operationId"]]] = Real(*values)  # type: ignore[arg-type]
    return found


# Operations no generated case can answer 2xx, and why.
NO_SUCCESS = {
    # takes no linked ids: deleting the linked session would leave every later case of the
    # routes under it a 404 (tests/api/test_erasure.py covers the delete)
    "DELETE /v1/sessions/{id}",
    # service tokens only; the fuzzing acts as a person (403)
    "GET /v1/org/erasures", "POST /v1/org/persons/{person}/erase",
    # a revert names the head and revision last seen, and a version of the session: generated
    # ones are never all three (409 or 400)
    "POST /v1/sessions/{id}/revert",
}


def test_schemathesis_over_rest(server: RunningServer, api: Api, http: requests.Session) -> None:
    # Half of each operation's cases take the path parameters and body fields that the
    # document's links give, followed from real answers (POST /v1/agents, /v1/sessions,
    # .../turns), so they reach the handlers and not only a 404: the agent's id is the `agent`
    # of a new session, the turn with `?wait` gives its run, and a turn awaiting approval is
    # the one to complete.
    document = api.ok(api.get("/openapi.json"))
    agent = api.agent()
    session = api.session(agent["id"])
    sid = session["session"]["id"]
    turn = api.ok(api.post(f"/v1/sessions/{sid}/turns?wait=30", {"items": [user("Hello!")]}), 201)
    awaiting = api.turn(sid, user("Book it?"), status="awaiting_approval")
    real = linked(document, [
        ("POST", "/v1/agents", {}, agent),
        ("POST", "/v1/sessions", {}, session),
        ("POST", "/v1/sessions/{id}/turns", {"id": sid}, turn),
        ("POST", "/v1/sessions/{id}/turns", {"id": sid}, awaiting),
    ])
    # a session is promoted only as a subagent's with a lasting entry (A12): its own link
    child = api.session(agent["id"], kind="subagent", parent=sid)["session"]["id"]
    api.remember(child, "airline", "We fly with Lufthansa.", "decision")
    real[("POST", "/v1/sessions/{id}/promote")] = Real(path={"id": child})
    assert real[("POST", "/v1/sessions")].body == {"agent": agent["id"]}
    assert real[("GET", "/v1/sessions/{id}/runs/{run}")].path["run"] == turn["run"]["id"]
    assert real[("POST", "/v1/sessions/{id}/turns/{turn}/complete")].path["turn"] == (
        awaiting["turn"]["id"])
    # and the bookmark a write's answer gave (a generated one is no bookmark Neo4j gave)
    bookmark = {BOOKMARK: api.post("/v1/agents", {"name": "bookmarked"}).headers[BOOKMARK]}
    real = {key: dataclasses.replace(one, headers=bookmark) for key, one in real.items()}
    schema = schemathesis.openapi.from_url(f"{server.url}/openapi.json", config=CONFIG)
    found = fuzz(schema, http, REST_CASES,
                 lambda method, path: None if method == "DELETE" else real.get((method, path)),
                 rest_shape, beyond_schema)
    print(f"schemathesis REST: {found.total()} cases over {len(found.cases)} operations, "
          f"{found.server_errors()} answers 5xx; statuses {dict(found.statuses)}; "
          f"cases answered 2xx per operation:\n{found.reach()}")
    assert found.broken == [], report(found)
    assert found.server_errors() == 0
    assert found.total() >= REST_CASES
    # every operation's answers were checked against the schema of their status
    assert set(found.conformed) == set(found.cases)
    # every operation was reached: each answered 2xx at least once, but those that cannot
    assert set(found.cases) >= NO_SUCCESS, sorted(found.cases)
    assert [label for label in sorted(found.cases)
            if found.succeeded[label] == 0 and label not in NO_SUCCESS] == [], found.reach()


def test_schemathesis_over_graphql(
    server: RunningServer, api: Api, http: requests.Session
) -> None:
    api.session(api.agent()["id"])
    schema = schemathesis.graphql.from_url(
        f"{server.url}/graphql", headers={"Authorization": f"Bearer {api.token}"}, config=CONFIG
    )
    found = fuzz(schema, http, GRAPHQL_CASES, lambda _method, _path: None, graphql_shape,
                 client_errors_only)
    print(f"schemathesis GraphQL: {found.total()} cases over {len(found.cases)} root fields, "
          f"{found.server_errors()} answers 5xx; statuses {dict(found.statuses)}; "
          f"cases answered 2xx per root field:\n{found.reach()}")
    assert found.broken == [], report(found)
    assert found.server_errors() == 0
    assert found.total() >= GRAPHQL_CASES


# --- random JSON bodies on every REST route that takes one ------------------------------

JSON_EXAMPLES = 30  # per route
HUGE = st.integers(min_value=-(10**400), max_value=10**400)
SCALARS = (st.none() | st.booleans() | st.integers() | HUGE | st.floats()
           | st.text(max_size=40) | st.sampled_from(["", "\ud800", "\u0000", "Remember", "fact"]))
ANY_JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner,
                                                                max_size=5),
    max_leaves=30,
)


def body_routes() -> list[tuple[str, str, type[BaseModel]]]:
    """(method, path, body model) of each REST route whose handler parses a body: taken from the
    app's route list and each route's declaration, so a new route is fuzzed without a change
    here."""
    return [
        (route.method, route.path, body)
        for route in routes
        if isinstance(route, Operation) and (body := route.doc.body) is not None
    ]


def bodies_for(model: type[BaseModel]) -> st.SearchStrategy[Any]:
    """Any JSON at all, or an object with the model's own field names and random values (wrong
    types, huge numbers, unicode), so validation is reached past the first field."""
    names = list(model.model_json_schema(by_alias=True).get("properties", {}))
    shaped = st.dictionaries(st.sampled_from(names), ANY_JSON, max_size=len(names))
    return ANY_JSON | shaped


@pytest.mark.parametrize(("method", "path", "model"), body_routes(),
                         ids=lambda v: v if isinstance(v, str) else "")
def test_random_json_bodies_never_break_a_route(
    api: Api, method: str, path: str, model: type[BaseModel]
) -> None:
    agent = api.agent()["id"]
    session = api.session(agent)["session"]["id"]
    url = path.replace("{id}", agent if path.startswith("/v1/agents") else session)
    url = url.replace("{turn}", "trn-none")
    fields = set(model.model_json_schema(by_alias=True).get("properties", {}))
    statuses: Counter[int] = Counter()

    @fuzz_settings(JSON_EXAMPLES)
    @given(body=bodies_for(model))
    def send(body: Any) -> None:
        answer = api.http.request(method, url, content=json.dumps(body),
                                  headers={"Content-Type": "application/json"})
        statuses[answer.status_code] += 1
        problem = rest_shape(answer.status_code, answer.text)
        assert problem is None, (body, problem)
        if answer.status_code == 400:  # the field at fault: the body, a field, or a key sent
            head = answer.json()["field"].split(".")[0]
            sent = set(body) if isinstance(body, dict) else set()
            assert head == "body" or head in fields | sent, (body, answer.text)

    send()
    assert sum(statuses.values()) >= JSON_EXAMPLES // 2
    assert all(status < 500 for status in statuses)


# --- regressions the fuzzing found ----------------------------------------------------------

def test_an_integer_past_64_bits_is_a_400_naming_it(api: Api) -> None:
    # Found by schemathesis: `?offset=2**84` reached Neo4j's driver and was a 500. Section 5's
    # error rule: a bad parameter is a 400 naming it, whether in the query or in a body (S12).
    session = api.session()["session"]
    answer = api.get("/v1/agents", params={"offset": str(2**84)})
    assert answer.status_code == 400, answer.text
    assert answer.json()["field"] == "offset"
    assert api.get("/v1/sessions", params={"limit": str(-(2**70))}).json()["field"] == "limit"
    huge = api.post(f"/v1/sessions/{session['id']}/memory", {
        "expected": session["head"], "revision": 2**64,
        "command": {"_tag": "Remember", "key": "k", "content": "c", "kind": "fact"}})
    assert huge.status_code == 400, huge.text
    assert huge.json()["field"] == "revision"


def test_a_body_that_json_does_not_allow_or_that_says_a_key_twice_is_a_400(
    api: Api, graph: Graph
) -> None:
    # Section 5's error rule: an integer past Python's digit limit, NaN and Infinity are no
    # JSON, and a key said twice leaves which value was checked to the parser; each is a 400
    # on the body, over REST and GraphQL alike, and nothing changes
    session = api.session()["session"]
    sid, head = session["id"], session["head"]
    remember = ('{"expected": "%s", "revision": %s, "command": {"_tag": "Remember", '
                '"key": "k", "content": "Ana flies on Tuesdays.", "kind": "fact"}}')
    for raw, message in (
        (remember % (head, "9" * 4301), "the body is not valid JSON"),
        (remember % (head, "NaN"), "the body is not valid JSON"),
        (remember % (head, "-Infinity"), "the body is not valid JSON"),
        (remember % (head, '0, "revision": 7'), "the key 'revision' is sent twice in one object"),
        (remember.replace('"kind": "fact"', '"kind": "fact", "kind": "fact"') % (head, 0),
         "the key 'kind' is sent twice in one object"),
    ):
        for url in (f"/v1/sessions/{sid}/memory", "/graphql"):
            answer = api.http.post(url, content=raw, headers={"Content-Type": "application/json"})
            assert answer.status_code == 400, (url, raw[:80], answer.text)
            got = answer.json()
            assert (got["_tag"], got["message"], got["field"]) == (
                "ValidationError", message, "body"), url
    assert graph.value("MATCH (e:Entry) RETURN count(e)") == 0
    assert api.view(sid)["session"]["head"] == head


def test_a_whole_float_is_an_integer_as_json_says(api: Api) -> None:
    # Found by schemathesis: JSON Schema's integer includes 3.0, which the strict bodies refused
    session = api.session()["session"]
    answer = api.post(f"/v1/sessions/{session['id']}/memory", {
        "expected": session["head"], "revision": float(session["revision"]),
        "command": {"_tag": "Remember", "key": "k", "content": "Ana flies on Tuesdays.",
                    "kind": "fact"}})
    assert answer.status_code == 200, answer.text
    half = api.post(f"/v1/sessions/{session['id']}/memory", {
        "expected": session["head"], "revision": 0.5,
        "command": {"_tag": "Refresh"}})
    assert half.status_code == 400
    assert half.json()["field"] == "revision"
