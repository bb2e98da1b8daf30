"""The GraphQL entry nodes built for a memory view live exactly as long as the view: a kept view
serves the same nodes on every read, a view read once takes its nodes with it."""

from __future__ import annotations

from app.api.graphql.nodes import BuiltEntries
from app.domain.enums import Kind, Status
from app.domain.sessions import Entries, Entry


def entry(key: str) -> Entry:
    return Entry(key=key, content=f"about {key}", kind=Kind.FACT, sources=(), updated_at=1,
                 status=Status.ACTIVE, change=f"chg-{key}", source_items=())


def test_a_view_still_held_serves_the_nodes_built_for_it() -> None:
    built = BuiltEntries()
    entries = Entries({"a": entry("a"), "b": entry("b")})
    first = built.nodes(entries)
    assert built.nodes(entries) is first
    assert [node.key for node in first.values()] == ["a", "b"]


def test_a_view_let_go_takes_its_nodes_with_it() -> None:
    built = BuiltEntries()
    entries = Entries({"a": entry("a")})
    built.nodes(entries)
    assert len(built.built) == 1
    del entries  # the request that read it ended
    assert built.built == {}


def test_another_view_is_answered_with_nodes_of_its_own() -> None:
    built = BuiltEntries()
    one, other = Entries({"a": entry("a")}), Entries({"a": entry("a")})
    assert built.nodes(one) is not built.nodes(other)
    assert built.nodes(other)["a"].change_id == "chg-a"


def test_entries_no_weak_reference_can_follow_are_not_remembered() -> None:
    built = BuiltEntries()
    plain = {"a": entry("a")}
    assert built.nodes(plain) is not built.nodes(plain)
    assert built.built == {}
