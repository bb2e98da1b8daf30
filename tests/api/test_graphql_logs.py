"""GraphQL errors in the logs: an expected one is one line without a traceback; an unexpected
one logs its traceback under the request id that its masked error carries."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from tests.conftest import Api, RunningServer, flat


def test_expected_graphql_errors_log_one_line_without_a_traceback(
    api: Api, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    for query in (
        'mutation { forget(sessionId: "ses-nope", expected: "v", revision: 0, key: "k") { id } }',
        '{ sessions(first: -1) { nodes { id } } }',  # ValidationError on first
        "{ nosuchfield }",  # does not validate
    ):
        answer = flat(api.graphql(query))
        assert answer["errors"], query
    with_traceback = [r for r in caplog.records if r.exc_info]
    assert with_traceback == []
    lines = [r.getMessage() for r in caplog.records if r.name == "openbot_memory.graphql"]
    assert lines == ["graphql NotFound at forget", "graphql ValidationError at sessions",
                     "graphql RequestError at -"]


def test_an_unexpected_graphql_error_logs_its_traceback_under_the_request_id_it_returns(
    api: Api, server: RunningServer, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO)

    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("exploded")

    monkeypatch.setattr(server.service.pages, "agents", broken)
    response = api.post("/graphql", {"query": "{ agents { nodes { id } } }"})
    [error] = response.json()["errors"]
    assert error["message"] == "Unexpected error."
    rid = response.headers["x-request-id"]
    assert error["extensions"] == {"requestId": rid}
    [record] = [r for r in caplog.records if r.exc_info]
    assert record.name == "openbot_memory.graphql"
    assert record.fields["requestId"] == rid  # type: ignore[attr-defined]
