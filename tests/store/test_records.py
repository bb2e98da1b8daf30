"""Rows as the service reads them (`plain_record`): what `Record.data()` would give, without its
generic conversion when a row holds only maps, lists and scalars."""

from __future__ import annotations

from typing import Any

from neo4j import Record
from neo4j.graph import Graph, Node

from app.store.database import plain_record


def record(values: dict[str, Any]) -> Record:
    return Record(values)  # type: ignore[no-untyped-call]


def test_a_row_of_maps_lists_and_scalars_is_what_data_gives() -> None:
    entries = [{"key": "k", "at": 1, "score": 0.5, "active": True, "about": None,
                "sources": [{"id": "i-1", "tags": ["a", "b"]}]}]
    found = record({"entries": entries, "revision": 3, "none": None})
    row = plain_record(found)
    assert row == found.data()
    assert row == {"entries": entries, "revision": 3, "none": None}


def test_a_node_deep_inside_a_row_is_converted_as_data_converts_it() -> None:
    node = Node(Graph(), "4:x:1", 1, ["Person"], {"id": "ana"})
    found = record({"entries": [{"key": "k", "by": [node]}], "n": 1})
    row = plain_record(found)
    assert row == found.data()
    assert row["entries"][0]["by"] == [{"id": "ana"}]
