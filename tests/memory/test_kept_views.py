"""The views a process keeps for its next Configure (issue 12) stay within their entry budget."""

from __future__ import annotations

from typing import Any, cast

import pytest

from app.memory import sessions
from app.memory.sessions import Sessions
from app.memory.switches import Overrides, Switches
from app.memory.values import Entry, Memory, Session, SessionView


def view(session_id: str, entries: int, revision: int = 1) -> SessionView:
    keep = {f"k{n}": Entry(key=f"k{n}", content="c", kind="fact", sources=(), updated_at=0,
                           status="active") for n in range(entries)}
    return SessionView(
        session=Session(id=session_id, agent="a", kind="main", head="v", revision=revision,
                        person=None, model=None, parent=None, forked_from=None, forked_at=None,
                        created_at=0),
        memory=Memory(entries=keep, processed=(), settings=Switches(use=True, generate=True),
                      overrides=Overrides()),
    )


def test_the_oldest_views_go_once_the_kept_ones_pass_the_entry_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sessions, "KEPT_ENTRIES", 10)
    kept = Sessions(db=cast(Any, None))
    for name, size in [("s1", 4), ("s2", 4), ("s1", 2), ("s3", 3)]:
        kept._keep(False, view(name, size))
    # s1 was answered again (2 entries, its 4 gone), so s2 is the oldest: 4 + 2 + 3 = 9 fit
    assert {sid: len(v.memory.entries) for sid, (_, v) in kept.answered.items()} == {
        "s2": 4, "s1": 2, "s3": 3}
    kept._keep(False, view("s4", 5))  # 14: s2 goes, then 10 fit
    assert list(kept.answered) == ["s1", "s3", "s4"]
    assert kept.kept_entries == 10
    kept._keep(False, view("s5", 11))  # larger than the budget: it goes too, with all the rest
    assert kept.answered == {}
    assert kept.kept_entries == 0


def test_a_kept_view_serves_only_its_head_revision_and_kind_of_read() -> None:
    kept = Sessions(db=cast(Any, None))
    kept._keep(True, view("s1", 1, revision=3))
    assert kept._kept("s1", True, "v", 3) is not None
    assert kept._kept("s1", False, "v", 3) is None  # read without its sources' items
    assert kept._kept("s1", True, "v", 2) is None
    assert kept._kept("s1", True, "w", 3) is None
    assert kept._kept("s2", True, "v", 3) is None
