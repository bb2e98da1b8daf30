"""The views a process keeps stay within their entry budget, and serve only their own
head and revision."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from app.domain.enums import Kind, SessionKind, Status, TurnStatus
from app.domain.items import ITEM_FIELDS, Item
from app.domain.sessions import (
    Edited,
    Entry,
    Memory,
    OrgSettings,
    Overrides,
    Session,
    SessionView,
    Switches,
    newest_first,
)
from app.domain.turns import Turn
from app.memory.sessions.kept import KeptView, KeptViews


def turn(turn_id: str) -> Turn:
    return Turn(id=turn_id, status=TurnStatus.COMPLETED, model=None, shown=(), shown_agent=(), at=0,
                completed_at=0, session="s1", head="v", revision=1)


def view(session_id: str, entries: int, revision: int = 1) -> SessionView:
    keep = {f"k{n}": Entry(key=f"k{n}", content="c", kind=Kind.FACT, sources=(), updated_at=0,
                           status=Status.ACTIVE) for n in range(entries)}
    return SessionView(
        session=Session(id=session_id, agent="a", kind=SessionKind.CHAT, head="v",
                        revision=revision, person=None, model=None, parent=None,
                        forked_from=None, forked_at=None, created_at=0),
        memory=Memory(entries=keep, processed=(), settings=Switches(use=True, generate=True),
                      overrides=Overrides()),
    )


def test_the_oldest_views_go_once_the_kept_ones_pass_the_entry_budget() -> None:
    kept = KeptViews(budget=10)
    for name, size in [("s1", 4), ("s2", 4), ("s1", 2), ("s3", 3)]:
        kept.keep(KeptView((), view(name, size)))
    # s1 was answered again (2 entries, its 4 gone), so s2 is the oldest: 4 + 2 + 3 = 9 fit
    assert {sid: len(k.view.memory.entries) for sid, k in kept.views.items()} == {
        "s2": 4, "s1": 2, "s3": 3}
    kept.keep(KeptView((), view("s4", 5)))  # 14: s2 goes, then 10 fit
    assert list(kept.views) == ["s1", "s3", "s4"]
    assert kept.size == 10
    kept.keep(KeptView((), view("s5", 11)))  # larger than the budget: it goes, with the rest
    assert kept.views == {}
    assert kept.size == 0


def test_no_budget_keeps_nothing() -> None:
    kept = KeptViews(budget=0)
    answered = view("s1", 0)
    assert kept.keep(KeptView(ITEM_FIELDS, answered)) is answered
    assert kept.get("s1") is None


def test_a_kept_view_is_at_its_own_head_and_revision_only() -> None:
    kept = KeptViews(budget=100)
    kept.keep(KeptView(ITEM_FIELDS, view("s1", 1, revision=3)))
    one = kept.get("s1")
    assert one is not None
    assert one.items == ITEM_FIELDS
    assert one.at("v", 3)
    assert not one.at("v", 2)
    assert not one.at("w", 3)
    assert kept.get("s2") is None


def test_a_views_turns_count_against_the_budget_with_its_entries() -> None:
    kept = KeptViews(budget=5)
    kept.keep(KeptView(ITEM_FIELDS, view("s1", 3), turns={"t1": turn("t1"), "t2": turn("t2")}))
    assert (list(kept.views), kept.size) == (["s1"], 5)
    kept.keep(KeptView(ITEM_FIELDS, view("s2", 0), turns={"t3": turn("t3")}))  # 6: s1 goes
    assert (list(kept.views), kept.size) == (["s2"], 1)


def test_a_view_read_for_a_selection_serves_only_what_it_read() -> None:
    # a nested view read for a GraphQL selection reads only the item properties it
    # asks, so its kept view serves a later selection of those alone
    kept = KeptView(("uid", "id", "content"), view("s1", 1), turns={})
    assert kept.serves(("uid", "id"))
    assert kept.serves(("uid", "id", "content"))
    assert not kept.serves(("uid", "id", "role"))
    assert not kept.serves(ITEM_FIELDS)
    assert KeptView(ITEM_FIELDS, view("s1", 1)).serves(("id", "at", "seq"))


def test_an_edit_at_a_kept_views_revision_replaces_its_entry_as_a_read_of_it_would() -> None:
    # S13, S12, S17: the view after a Remember made at a kept view's revision is that
    # view with the entry's new state (its source: the edit's item, with the properties the
    # view was read with), at the new head and revision, newest first, with the org's settings
    # now (S4); the other entries stay as they were
    written = Item.from_row(["u9", "i-09", "memory_edit", "person", "Remember k0 (fact): new",
                             None, "ana", 50, 9, None])
    done = Edited(head="v2", revision=2, org=OrgSettings(generate=False), entry=Entry(
        key="k0", content="new", kind=Kind.FACT, sources=("i-09",), updated_at=50,
        status=Status.ACTIVE, change="chg-9", source_items=(written,)))
    before = view("s1", 3)
    for fields in (ITEM_FIELDS, ("uid", "id", "content"), ()):
        after = before.edited(done, fields)
        assert (after.session.head, after.session.revision) == ("v2", 2)
        assert list(after.memory.entries) == ["k0", "k1", "k2"]  # newest first, ties by key
        assert [after.memory.entries[k] for k in ("k1", "k2")] == [
            before.memory.entries[k] for k in ("k1", "k2")]
        entry = after.memory.entries["k0"]
        assert (entry.content, entry.sources, entry.updated_at, entry.change) == (
            "new", ("i-09",), 50, "chg-9")
        # as a view read with `fields` has the item: the properties it read, the rest None
        read = Item.from_row([getattr(written, f) for f in fields] + [None], fields)
        assert entry.source_items == (None if not fields else (read,))
        assert after.memory.settings == Switches(use=True, generate=False)
        assert after.org == done.org


@given(
    times=st.lists(st.integers(0, 3), min_size=0, max_size=6),
    key=st.integers(0, 6),
    at=st.integers(0, 4),
)
def test_an_edit_leaves_the_view_newest_first_whatever_its_time(
    times: list[int], key: int, at: int
) -> None:
    # S2: a view's entries are newest first, ties by key, after an edit as after a read,
    # whether the edit is the newest entry, ties with one, or is older than some (a clock
    # behind another process's)
    entries = [Entry(key=f"k{n}", content="c", kind=Kind.FACT, sources=(), updated_at=t,
                     status=Status.ACTIVE) for n, t in enumerate(times)]
    before = replace(view("s1", 0), memory=replace(
        view("s1", 0).memory, entries={e.key: e for e in newest_first(entries)}))
    done = Edited(head="v2", revision=2, org=OrgSettings(), entry=Entry(
        key=f"k{key}", content="new", kind=Kind.FACT, sources=(), updated_at=at,
        status=Status.ACTIVE, change="chg", source_items=()))
    after = before.edited(done, ())
    expected = newest_first([*(e for e in entries if e.key != f"k{key}"), done.entry])
    assert list(after.memory.entries) == [e.key for e in expected]
    assert after.memory.entries[f"k{key}"].content == "new"
