"""A GraphQL request's context lets go of what it read once the request is answered
(`Context.release`, called by the HTTP app after each operation): its loaders refer back to the
context, so without it every view a request read would wait for a pass of the collector over
older generations, the largest cost of a busy process serving nested views."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any, cast

import pytest

from app.api.graphql.context import Context
from app.domain.principals import Principal
from app.domain.sessions import SessionView
from tests.conftest import Api, RunningServer


class Read:
    """Something a loader answered (a view, in the service)."""


@pytest.fixture
def no_collector() -> Iterator[None]:
    gc.collect()
    gc.disable()
    yield
    gc.enable()


def context() -> Context:
    service = SimpleNamespace(sessions=None, pages=None)
    return Context(cast(Any, service), Principal("org", "alice"), cast(Any, None),
                   cast(Any, None))


def loaded(ctx: Context) -> weakref.ref[Read]:
    read = Read()
    ctx.sessions.prime("ses-1", cast(Any, read))
    ctx.sessions_with_turns(("uid", "id")).prime("ses-1", cast(Any, read))
    ctx.page("items", None, 2).prime("ver-1", [cast(Any, read)])
    return weakref.ref(read)


def test_what_a_released_context_read_goes_with_it(no_collector: None) -> None:
    async def request() -> weakref.ref[Read]:
        ctx = context()
        read = loaded(ctx)
        ctx.release()
        return read

    assert asyncio.run(request())() is None


def test_without_release_the_loaders_cycle_holds_it_until_a_collection(
    no_collector: None,
) -> None:
    async def request() -> weakref.ref[Read]:
        return loaded(context())

    read = asyncio.run(request())
    assert read() is not None  # the cycle the release breaks
    gc.collect()
    assert read() is None


NESTED = """query Nested($id: ID!) {
  session(id: $id) { id memory { entries(first: 10) { nodes { key content
    sources { id content turn { id at } } } } } } }"""


def views_of(session_id: str) -> int:
    """The views of the session alive in this process (the test's server runs in it)."""
    return sum(
        1 for found in gc.get_objects()
        if isinstance(found, SessionView) and found.session.id == session_id
    )


def test_a_served_request_leaves_none_of_the_views_it_read(
    api: Api, start_server: Callable[..., RunningServer], graphql_fast_path: bool
) -> None:
    keeps_none = Api(start_server(kept_view_entries=0).url, api.token)
    sid = keeps_none.session(keeps_none.agent()["id"])["session"]["id"]
    keeps_none.remember(sid, "seat", "Ana takes the aisle seat.")
    gc.collect()
    gc.disable()
    try:
        answer = keeps_none.graphql(NESTED, id=sid)
        assert [e["key"] for e in answer["data"]["session"]["memory"]["entries"]["nodes"]] == [
            "seat"
        ]
        assert views_of(sid) == 0  # freed as the request ended, with no collection
    finally:
        gc.enable()
