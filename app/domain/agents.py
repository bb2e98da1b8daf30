"""Agents: the configured assistants of an org, and the entries of their lasting memory."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.domain.sessions import Entry


@dataclass(frozen=True)
class Agent:
    """A configured assistant of an org."""

    id: str
    name: str
    shared: bool
    model: str | None
    created_at: int

    @classmethod
    def from_record(cls, row: Mapping[str, Any]) -> Agent:
        return cls(
            id=row["id"],
            name=row["name"],
            shared=bool(row.get("shared")),
            model=row.get("model"),
            created_at=row["createdAt"],
        )


@dataclass(frozen=True)
class Source:
    """A3: an item of a session that supports an agent entry."""

    session: str
    item: str
    uid: str


def _sources(row: Mapping[str, Any]) -> tuple[Source, ...]:
    return tuple(Source(s["session"], s["item"], s["uid"]) for s in row.get("sources") or ())


@dataclass(frozen=True)
class AgentEntry:
    """The current state of one agent entry."""

    key: str
    owner: str
    content: str
    kind: str
    status: str
    about: str | None
    visibility: str
    updated_at: int
    change: str
    sources: tuple[Source, ...] = ()

    @classmethod
    def from_record(cls, row: Mapping[str, Any]) -> AgentEntry:
        return cls(
            key=row["key"],
            owner=row["owner"],
            content=row["content"],
            kind=row["kind"],
            status=row["status"],
            about=row.get("about"),
            visibility=row["visibility"],
            updated_at=row["updatedAt"],
            change=row["change"],
            sources=_sources(row),
        )

    def as_entry(self) -> Entry:
        """The shape instructions render (S5, S6 hold for agent entries too, A8)."""
        return Entry(
            key=self.key,
            content=self.content,
            kind=self.kind,
            sources=tuple(source.item for source in self.sources),
            updated_at=self.updated_at,
            status=self.status,
            change=self.change,
        )
