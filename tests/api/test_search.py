"""Full-text search (issue 14): ranking (an exact key first), filters, paging, bad queries, and
what each caller may find (the caller's org, a person's own sessions, never another member's
private agent entries)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.test_agent_memory import remember as agent_remember
from tests.conftest import Api, Graph

Body = dict[str, Any]


def search(api: Api, q: str, **params: Any) -> Body:
    body: Body = api.ok(api.get("/v1/search", params={"q": q, **params}))
    return body


def keys(body: Body) -> list[str]:
    return [hit["entry"]["key"] for hit in body["hits"]]


def test_a_hit_is_the_entry_view_with_its_session_score_and_snippet(
    api: Api, graph: Graph
) -> None:
    sid = api.session()["session"]["id"]
    api.remember(sid, "budget", "The trip budget is 1500 EUR.")
    body = search(api, "budget")
    [hit] = body["hits"]
    entry = api.view(sid)["memory"]["entries"]["budget"]
    assert hit["entry"] == {**entry, "session": sid}
    assert hit["score"] > 0
    assert hit["snippet"] == "The trip **budget** is 1500 EUR."
