"""A session's timeline: its items, their ids, and the properties a view reads of them (S5,
S6)."""

from __future__ import annotations

import secrets
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from app.domain.made import made

# An item's id by its place in the branch: the prefix, then the seq zero-padded to the digits.
# (record_memory_edit.cypher builds the same from these two, passed as parameters.)
ITEM_PREFIX = "i-"
ITEM_DIGITS = 2


def item_id(seq: int) -> str:
    """The id of the seq-th item of a branch, e.g. `i-02`."""
    return f"{ITEM_PREFIX}{seq:0{ITEM_DIGITS}d}"


def next_item_ids(items: int, count: int) -> list[str]:
    """The ids of the `count` items after the `items` a branch has (where no client chose one)."""
    return [item_id(items + 1 + n) for n in range(count)]


def untaken(candidate: str, taken: Collection[str]) -> str:
    """`candidate`, or where a client took it already for an item of its own, `candidate` with
    a random suffix (`i-03-1f2e3d`): ids are unique on a branch."""
    return candidate if candidate not in taken else f"{candidate}-{secrets.token_hex(3)}"


# An item's properties, as a view reads them (session_views' `$itemFields`), in Item's order.
ITEM_FIELDS = ("uid", "id", "type", "role", "content", "app", "author", "at", "seq")


@cache
def _positions(fields: tuple[str, ...]) -> tuple[int, ...]:
    """Where each of `fields` is in ITEM_FIELDS."""
    return tuple(ITEM_FIELDS.index(f) for f in fields)


@dataclass(frozen=True)
class Item:
    """One entry of a session's timeline."""

    uid: str
    id: str
    type: str
    role: str | None
    content: str | None
    app: str | None
    author: str | None
    at: int
    seq: int
    turn: str | None = None
    turn_known: bool = False  # whether the record said which turn (None: a memory edit's)
    erased: bool = False  # read as a tombstone (only what a job reads says so)
    expired: bool = False  # read as one retention emptied (only what a job reads says so)

    @classmethod
    def from_row(cls, row: Sequence[Any], fields: tuple[str, ...] = ITEM_FIELDS) -> Item:
        """An item as session_views answers it: a list of the properties `fields` names (of
        ITEM_FIELDS, in its order), then its turn's id. A view read for a GraphQL selection
        reads only what it asks (`Query.session`) and leaves every other property None: only
        that selection reads such an item."""
        if fields is ITEM_FIELDS:
            uid, id_, type_, role, content, app, author, at, seq, turn = row
        else:
            read: list[Any] = [None] * len(ITEM_FIELDS)
            for at, value in zip(_positions(fields), row, strict=False):  # (the turn's id last)
                read[at] = value
            uid, id_, type_, role, content, app, author, at, seq = read
            turn = row[-1]
        return made(cls, {"uid": uid, "id": id_, "type": type_, "role": role,
                          "content": content, "app": app, "author": author, "at": at,
                          "seq": seq, "turn": turn, "turn_known": True, "erased": False,
                          "expired": False})


    def only(self, fields: tuple[str, ...]) -> Item:
        """This item as a view read with `fields` has it (`from_row`): every other property
        None."""
        if fields == ITEM_FIELDS:
            return self
        return Item.from_row([getattr(self, f) for f in fields] + [self.turn], fields)


def outside_data(cited: Sequence[Item]) -> bool:
    """A4: whether what cites these items rests on tool results from Apps alone, outside data
    that no agent memory keeps; nothing cited is not so."""
    return bool(cited) and all(item.app is not None for item in cited)


@dataclass(frozen=True, slots=True)
class BranchItem:
    """An item on the branch of a session's head, with the turn it came in."""

    id: str
    uid: str
    turn: str | None
    type: str
    role: str | None
    content: str | None
