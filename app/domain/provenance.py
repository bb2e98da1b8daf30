"""Provenance's records: the story of an entry, change by change, with what made each and the
items it cites, and the entry changes that cite an item or that a turn was shown."""

from __future__ import annotations

from dataclasses import dataclass

from app.domain.agents import listed_key
from app.domain.enums import ChangeOp, Kind, Status, Visibility
from app.domain.history import Change
from app.domain.items import Item


@dataclass(frozen=True)
class Cited:
    """An item a change cites, with the turn it came in and that turn's session."""

    item: Item
    turn: str | None
    session: str | None


@dataclass(frozen=True)
class StoryStep:
    """One change of an entry's story and what made it: a person, a run (its model and turn),
    a fork's copy, a promotion."""

    change: Change
    person: str | None
    run: str | None
    run_model: str | None
    run_turn: str | None
    cites: tuple[Cited, ...]


@dataclass(frozen=True)
class Citing:
    """A change of a session entry or an agent entry that cites an item (what it supports)."""

    key: str
    change: str
    op: ChangeOp | None
    content: str | None
    kind: Kind | None
    status: Status | None
    at: int
    session: str | None = None
    agent: str | None = None
    version: int | None = None
    about: str | None = None
    visibility: Visibility | None = None
    owner: str | None = None  # an agent entry's owner ("" for a shared one)

    @property
    def name(self) -> str:
        """The name the entry is listed under: a session entry's key, an agent entry's
        `listed_key`."""
        return self.key if self.owner is None else listed_key(self.key, self.owner)


Pair = tuple[list[Citing], list[Citing]]  # (session entries, agent entries)
