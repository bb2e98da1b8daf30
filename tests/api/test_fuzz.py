"""Fuzzing against a live server: schemathesis over REST (from `/openapi.json`) and GraphQL (from
the served schema), with all of schemathesis' checks, and random JSON bodies on every REST route
that takes one. Whatever is sent: no 5xx, no stack trace in a body, and every error has the
service's shape (`{"_tag", "message"}` over REST, `extensions.code` over GraphQL)."""

from __future__ import annotations

import json
import re
import time
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
from schemathesis import GenerationMode
from schemathesis.core.failures import FailureGroup
from schemathesis.specs.openapi.checks import positive_data_acceptance

from tests.conftest import Api, RunningServer

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
    seconds: Counter[str] = field(default_factory=Counter)
    no_negative: list[str] = field(default_factory=list)  # operations with no invalid input

    def total(self) -> int:
        return sum(self.cases.values())

    def server_errors(self) -> int:
        return sum(n for status, n in self.statuses.items() if status >= 500)


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
)


def beyond_schema(response: requests.Response) -> list[Any]:
    """positive_data_acceptance, excluded for this answer only when it is a 400 for one of the
    rules in BEYOND_SCHEMA; every other check always runs."""
    if response.status_code != 400:
        return []
    try:
        message = str(response.json().get("message", ""))
    except ValueError:
        return []
    return [positive_data_acceptance] if BEYOND_SCHEMA.search(message) else []


@pytest.fixture
def http(api: Api) -> Iterator[requests.Session]:
    """A requests session (schemathesis' transport) carrying ana's token."""
    with requests.Session() as session:
        session.headers["Authorization"] = f"Bearer {api.token}"
        yield session


def fuzz(
    schema: schemathesis.BaseSchema,
    http: requests.Session,
    examples: int,
    fixed: Callable[[str], dict[str, Any] | None],
    shape: Callable[[int, str], str | None],
) -> Findings:
    """Each operation of `schema`, in both generation modes, `examples` cases each (fewer where
    its inputs run out); with `fixed(path)`'s path parameters too, so cases reach real objects."""
    found = Findings()
    for result in schema.get_all_operations():
        operation = result.ok()
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            strategies = [operation.as_strategy(mode)]
            real = fixed(operation.path)
            if real:
                strategies.append(operation.as_strategy(mode, path_parameters=real))

            @fuzz_settings(examples)
            @given(case=st.one_of(strategies))
            def run(case: schemathesis.Case) -> None:
                found.cases[operation.label] += 1
                t0 = time.monotonic()
                response = case.call(session=http, timeout=60)
                try:
                    case.validate_response(
                        response, excluded_checks=beyond_schema(response),
                        transport_kwargs={"session": http, "timeout": 60})
                except FailureGroup as failures:
                    found.broken.append(f"{case.operation.label}: {failures}")
                    return
                found.statuses[response.status_code] += 1
                found.seconds[operation.label] += time.monotonic() - t0
                problem = shape(response.status_code, response.content.decode(errors="replace"))
                if problem:
                    found.broken.append(f"{operation.label}: {problem}")

            try:
                run()
            except Unsatisfiable:
                # no input breaks this operation's schema (GET /healthz has none to break)
                assert mode is GenerationMode.NEGATIVE, operation.label
                found.no_negative.append(operation.label)
    return found


def test_schemathesis_over_rest(server: RunningServer, api: Api, http: requests.Session) -> None:
    agent = api.agent()["id"]
    session = api.session(agent)["session"]["id"]
    schema = schemathesis.openapi.from_url(f"{server.url}/openapi.json", config=CONFIG)
    operations = len(list(schema.get_all_operations()))

    def fixed(path: str) -> dict[str, Any] | None:
        if path.startswith("/v1/sessions/{id}"):
            return {"id": session}
        if path.startswith("/v1/agents/{id}"):
            return {"id": agent}
        return None

    found = fuzz(schema, http, 3, fixed, rest_shape)
    print(f"schemathesis REST: {found.total()} cases over {operations} operations, "
          f"{found.server_errors()} answers 5xx; statuses {dict(found.statuses)}")
    kinds = Counter(
        (b.split(":")[0], re.findall(r"- (ST\d+ [^\n]*)", b)[:1].__str__()) for b in found.broken)
    for kind, n in kinds.most_common():
        print(n, kind)
    print(found.seconds.most_common(8))
    seen = set()
    for b in found.broken:
        k = (b.split(":")[0], str(re.findall(r"- (ST\d+ [^\n]*)", b)[:1]))
        if k not in seen:
            seen.add(k)
            print(b[:1200])
    assert found.broken == []
    assert found.server_errors() == 0
    assert found.total() >= REST_CASES


def test_schemathesis_over_graphql(
    server: RunningServer, api: Api, http: requests.Session
) -> None:
    api.session(api.agent()["id"])
    schema = schemathesis.graphql.from_url(
        f"{server.url}/graphql", headers={"Authorization": f"Bearer {api.token}"}, config=CONFIG
    )
    operations = len(list(schema.get_all_operations()))
    found = fuzz(schema, http, GRAPHQL_CASES // (2 * operations) + 1, lambda _: None,
                 graphql_shape)
    print(f"schemathesis GraphQL: {found.total()} cases over {operations} root fields, "
          f"{found.server_errors()} answers 5xx; statuses {dict(found.statuses)}")
    assert found.broken == []
    assert found.server_errors() == 0
    assert found.total() >= GRAPHQL_CASES
