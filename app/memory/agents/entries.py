"""Agent memory's values and its rules of who sees what (A1, A5, A6, A9), as pure functions.

An entry is one lasting experience under one key. Its identity is (agent, key, owner): the owner
is the person a private entry is about, and nobody ("") for a shared one. So ana's private
`seat` and a shared `seat` are two entries, and no member's write can touch (or reveal) another
member's private entry. An entry's visibility never changes; a Remember with another visibility
writes another entry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from app.domain.enums import AGENT_KINDS as AGENT_KINDS  # A1
from app.domain.enums import Visibility
from app.memory.values import Entry, Principal

VISIBILITIES: tuple[Visibility, ...] = tuple(Visibility)
SHARED = ""  # the owner of a shared entry


@dataclass(frozen=True)
class Source:
    """A3: an item of a session that supports an agent entry."""

    session: str
    item: str
    uid: str


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
            sources=tuple(
                Source(s["session"], s["item"], s["uid"]) for s in row.get("sources") or ()
            ),
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


def owner_of(visibility: str, about: str | None) -> str:
    """The owner part of an entry's identity: the person a private entry is about."""
    if visibility == Visibility.PRIVATE:
        assert about is not None
        return about
    return SHARED


def may_see(person: str | None, owner: str) -> bool:
    """A9: a person sees shared entries and their own private ones; `None` (a service token,
    or the service itself) sees all."""
    return person is None or owner in (SHARED, person)


def view_key(who: Principal, entry: AgentEntry) -> str:
    """The key an entry is listed under for `who`. A person sees at most one entry per key
    (their private one over a shared one); a service token sees every member's private
    entries, so those are listed as `key@person`."""
    if who.person is None and entry.owner != SHARED:
        return f"{entry.key}@{entry.owner}"
    return entry.key


def view_of(who: Principal, entries: Iterable[AgentEntry]) -> dict[str, AgentEntry]:
    """The entries `who` may see, by the key each is listed under, newest first."""
    visible = [e for e in entries if may_see(who.person, e.owner)]
    # A private entry comes after the shared one of its key, so it wins for its owner.
    ordered = sorted(visible, key=lambda e: e.owner != SHARED)
    keyed = {view_key(who, e): e for e in ordered}
    return dict(sorted(keyed.items(), key=lambda kv: (-kv[1].updated_at, kv[0])))


def target_of(
    entries: Iterable[AgentEntry], person: str | None, key: str, about: str | None
) -> AgentEntry | None:
    """The entry a Forget of `key` means for a caller acting as `person`: their own private
    entry of that key (or, with `about`, that person's), else the shared one."""
    candidates = {e.owner: e for e in entries if e.key == key}
    if about is not None:
        return candidates.get(about) if may_see(person, about) else None
    if person is not None and person in candidates:
        return candidates[person]
    return candidates.get(SHARED)


@dataclass(frozen=True)
class AgentMemory:
    """A10: an agent's memory as one caller may see it."""

    entries: Mapping[str, AgentEntry]
    version: int


@dataclass(frozen=True)
class AgentChange:
    """One recorded change of one agent entry."""

    id: str
    version: int
    op: str
    maker: str
    person: str | None
    key: str
    content: str
    kind: str
    status: str
    about: str | None
    visibility: str
    before_content: str | None
    before_status: str | None
    at: int
    job: str | None
    sources: tuple[Source, ...]

    @classmethod
    def from_record(cls, row: Mapping[str, Any]) -> AgentChange:
        return cls(
            id=row["id"],
            version=row["version"],
            op=row["op"],
            maker=row["maker"],
            person=row.get("person"),
            key=row["key"],
            content=row["content"],
            kind=row["kind"],
            status=row["status"],
            about=row.get("about"),
            visibility=row["visibility"],
            before_content=row.get("beforeContent"),
            before_status=row.get("beforeStatus"),
            at=row["at"],
            job=row.get("job"),
            sources=tuple(
                Source(s["session"], s["item"], s["uid"]) for s in row.get("sources") or ()
            ),
        )


@dataclass(frozen=True)
class LogEntry:
    """A11: one version of an agent's memory: when, what made it, the keys the caller may see."""

    version: int
    at: int
    maker: str
    person: str | None
    keys: tuple[str, ...]
