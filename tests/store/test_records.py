"""Rows as the service reads them (`plain_record`): what `Record.data()` would give, without its
generic conversion when a row holds only maps, lists and scalars."""

from __future__ import annotations

from typing import Any

from neo4j import Record
from neo4j.graph import Graph, Node

from app.domain.agents import AgentEntry, Source
from app.domain.enums import JobStatus
from app.domain.history import Change
from app.domain.jobs import Dropped, Run
from app.domain.sessions import OrgSettings
from app.store import records
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


def test_a_run_is_read_from_its_camel_case_map_with_its_dropped_changes() -> None:
    # S11: what a run read, kept and dropped, as the jobs repository answers it
    row = {"id": "run-1", "status": "failed", "model": "offline", "queuedAt": 5,
           "startedAt": 6, "session": "s-1", "read": ["i-1"], "kept": None,
           "dropped": [{"op": "remember", "key": "k", "reason": "no sources",
                        "proposal": "{}"}]}
    run = records.record(Run, row)
    assert run == Run(id="run-1", status=JobStatus.FAILED, model="offline", trigger=None,
                      error=None, queued_at=5, started_at=6, finished_at=None, attempts=None,
                      head=None, session="s-1", turn=None, read=("i-1",), tried=(), kept=(),
                      dropped=(Dropped("remember", "k", "no sources", "{}"),))


def test_an_agent_entry_reads_its_sources_and_a_change_its_cited_items() -> None:
    # A3: an agent entry's sources; S3: the items a change cites, with the turn they came in
    entry = records.record(AgentEntry, {
        "key": "seat", "owner": "", "content": "aisle", "kind": "preference",
        "status": "active", "visibility": "shared", "updatedAt": 3, "change": "c-1",
        "sources": [{"session": "s-1", "item": "i-1", "uid": "u-1"}],
    })
    assert entry.sources == (Source("s-1", "i-1", "u-1"),)
    assert entry.about is None
    item = {"uid": "u-1", "id": "i-1", "type": "message", "at": 1, "seq": 1, "turn": "t-1"}
    change = records.record(Change, {"id": "c-1", "op": "remember", "maker": "person",
                                     "key": "seat", "at": 2, "cites": [item]})
    [cited] = change.cites
    assert (cited.turn, cited.turn_known, cited.role) == ("t-1", True, None)
    assert change.made_by is None
    assert change.before_content is None


def test_org_settings_leave_a_switch_on_unless_it_is_set_off() -> None:
    # S4: an org default not set is on
    assert records.org_settings({}) == OrgSettings()
    assert records.org_settings({"memoryUse": False, "model": "m"}) == OrgSettings(
        use=False, model="m"
    )
