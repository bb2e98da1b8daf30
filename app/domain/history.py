"""A session's history: the changes of its memory, its versions, and the memory as it was at
one (S12-S17)."""

from __future__ import annotations

from dataclasses import dataclass

from app.domain.enums import ChangeOp, Kind, Maker, Status
from app.domain.items import Item
from app.domain.sessions import Entry


@dataclass(frozen=True)
class Change:
    """One recorded memory change: what it changed, before and after, what made it, its sources."""

    id: str
    op: ChangeOp
    maker: Maker
    key: str
    content: str | None
    kind: Kind | None
    status: Status | None
    at: int
    before_content: str | None
    before_kind: Kind | None
    before_status: Status | None
    revision: int | None
    head: str | None
    session: str | None
    made_by: str | None
    run: str | None
    model: str | None
    cites: tuple[Item, ...]


@dataclass(frozen=True)
class Version:
    """A past or present head of a session."""

    id: str
    cause: str
    at: int
    depth: int
    parent: str | None
    reverted_from: str | None
    added: tuple[str, ...]
    current: bool


@dataclass(frozen=True, slots=True)
class MemoryAt:
    """The memory at a version: its entries (newest first), the items processed, and the
    newest processed item's seq."""

    entries: tuple[Entry, ...]
    processed: tuple[str, ...]
    processed_seq: int


@dataclass(frozen=True, slots=True)
class VersionRef:
    """A version of a session's history as one is looked up: its id, cause and time, its
    depth and the items on its branch."""

    id: str
    cause: str
    at: int
    depth: int
    items: int
