"""A statement run with a session's view keeps the caller's scope (S1, A9): parameters may
name it again, but never change it."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from app.domain.items import ITEM_FIELDS
from app.domain.principals import Principal
from app.store.database import Tx
from app.store.sessions import SessionRepository


class Recorded:
    """A transaction that records the one statement it is asked to run, and answers no row."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def row(self, name: str, **params: Any) -> None:
        self.calls.append((name, params))


ANA = Principal("acme", person="ana")


@pytest.mark.parametrize("changed", [{"person": None}, {"person": "ben"}, {"org": "globex"}])
def test_params_that_would_change_the_callers_scope_are_refused(changed: dict[str, Any]) -> None:
    tx = Recorded()
    sessions = SessionRepository(cast(Tx, tx))
    with pytest.raises(ValueError, match="would change the caller's scope"):
        asyncio.run(sessions.with_view(ANA, "s-1", "lock_session", **changed))
    assert tx.calls == []  # nothing ran


def test_params_may_name_the_callers_scope_again() -> None:
    tx = Recorded()
    sessions = SessionRepository(cast(Tx, tx))
    answer = asyncio.run(
        sessions.with_view(ANA, "s-1", "lock_session", org="acme", person="ana", id="s-1")
    )
    assert answer is None
    assert tx.calls == [("lock_session+session_views",
                         {"org": "acme", "person": "ana", "id": "s-1", "ids": ["s-1"],
                          "items": True, "turns": False, "itemFields": list(ITEM_FIELDS)})]
