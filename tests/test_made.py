"""Values read in bulk (`app.domain.made`) are the values their dataclass makes: equal, equally
hashed, and frozen."""

from __future__ import annotations

import dataclasses

import pytest

from app.domain.enums import Kind, Status, TurnStatus
from app.domain.items import ITEM_FIELDS, Item
from app.domain.sessions import Entry
from app.domain.turns import Turn

ITEM_ROW = ["itm-1", "i-01", "message", "user", "Hello.", None, "alice", 10, 1, "trn-1"]


def test_an_item_read_from_a_row_is_the_item_its_constructor_makes() -> None:
    read = Item.from_row(ITEM_ROW)
    made = Item(uid="itm-1", id="i-01", type="message", role="user", content="Hello.",
                app=None, author="alice", at=10, seq=1, turn="trn-1", turn_known=True)
    assert read == made
    assert hash(read) == hash(made)
    assert repr(read) == repr(made)
    with pytest.raises(dataclasses.FrozenInstanceError):
        read.content = "changed"  # type: ignore[misc]


def test_an_item_read_with_some_fields_leaves_the_others_none() -> None:
    read = Item.from_row(["itm-1", "i-01", "Hello.", "trn-1"], ("uid", "id", "content"))
    assert read == Item(uid="itm-1", id="i-01", type=None, role=None,  # type: ignore[arg-type]
                        content="Hello.", app=None, author=None, at=None,  # type: ignore[arg-type]
                        seq=None, turn="trn-1", turn_known=True)  # type: ignore[arg-type]
    assert set(vars(read)) == {f.name for f in dataclasses.fields(Item)}
    assert set(ITEM_FIELDS) <= set(vars(read))


def test_an_entry_and_a_turn_read_from_rows_are_those_their_constructors_make() -> None:
    entry = Entry.from_row(["budget", "50 EUR", "fact", "active", 20, "chg-1", ["i-01"],
                            [ITEM_ROW]])
    assert entry == Entry(key="budget", content="50 EUR", kind=Kind.FACT, sources=("i-01",),
                          updated_at=20, status=Status.ACTIVE, change="chg-1",
                          source_items=(Item.from_row(ITEM_ROW),))
    assert Entry.from_row(["k", "c", "fact", "active", 1, "chg", ["i-01"], None]).source_items \
        is None
    turn = Turn.from_row(["trn-1", "completed", "builtin", ["budget"], None, 10, 11, "v-1", 2,
                          "ses-1"])
    assert turn == Turn(id="trn-1", status=TurnStatus.COMPLETED, model="builtin", shown=("budget",),
                        shown_agent=(), at=10, completed_at=11, session="ses-1", head="v-1",
                        revision=2)
    assert hash(turn) == hash(dataclasses.replace(turn))
    with pytest.raises(dataclasses.FrozenInstanceError):
        turn.status = TurnStatus.FAILED  # type: ignore[misc]
