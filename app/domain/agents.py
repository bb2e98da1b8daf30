"""Agents and their lasting memory: the values the store reads and the rules decide over.

An entry is one lasting experience under one key. Its identity is (agent, key, owner): the owner
is the person a private entry is about, and nobody ("") for a shared one. So ana's private
`seat` and a shared `seat` are two entries, listed as `seat@ana` and `seat` (`listed_key`), and
no member's write can touch (or reveal) another member's private entry. An entry's visibility
never changes; a Remember with another visibility writes another entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from app.domain.enums import AGENT_KINDS as AGENT_KINDS  # A1
from app.domain.enums import ChangeOp, Kind, Maker, Status, Visibility
from app.domain.sessions import Entry

VISIBILITIES: tuple[Visibility, ...] = tuple(Visibility)
SHARED = ""  # the owner of a shared entry


def listed_key(key: str, owner: str) -> str:
    """The name an entry goes by in every reader's view, the log and the instructions: its key
    for a shared entry, `key@person` for a private one (keys have no `@`)."""
    return key if owner == SHARED else f"{key}@{owner}"


def is_agent_key(key: str) -> bool:
    """Whether `key` may name an agent entry: it has no `@`, so no key looks like the name
    `listed_key` gives a private entry. Every path that writes agent memory holds to it."""
    return "@" not in key


@dataclass(frozen=True)
class Agent:
    """A configured assistant of an org."""

    id: str
    name: str
    shared: bool
    model: str | None
    created_at: int


@dataclass(frozen=True)
class Source:
    """A3: an item of a session that supports an agent entry."""

    session: str
    item: str
    uid: str
    person: str | None = None  # the person of the session (who may reach it)


@dataclass(frozen=True)
class AgentEntry:
    """The current state of one agent entry."""

    key: str
    owner: str
    content: str
    kind: Kind
    status: Status
    about: str | None
    visibility: Visibility
    updated_at: int
    change: str
    sources: tuple[Source, ...] = ()

    @property
    def name(self) -> str:
        """The name the entry is listed under (`listed_key`)."""
        return listed_key(self.key, self.owner)

    def as_entry(self) -> Entry:
        """The shape instructions render (S5, S6 hold for agent entries too, A8), under the
        entry's name."""
        return Entry(
            key=self.name,
            content=self.content,
            kind=self.kind,
            sources=tuple(source.item for source in self.sources),
            updated_at=self.updated_at,
            status=self.status,
            change=self.change,
        )


@dataclass(frozen=True)
class AgentRead:
    """An agent's memory as a reader sees it: its version, whether the agent is shared, and the
    entries the reader may see."""

    version: int
    shared: bool
    entries: tuple[AgentEntry, ...]


@dataclass(frozen=True)
class AgentMemory:
    """A10: an agent's memory as one caller may see it."""

    entries: Mapping[str, AgentEntry]
    version: int


@dataclass(frozen=True)
class AgentEdit:
    """A change to one agent entry, checked and ready to apply: the entry it writes (key and
    owner) and its new state. A learned change cites the ids of its session's items when it is
    checked and their uids when it is applied; a promoted one names the session changes it
    comes from."""

    op: ChangeOp
    key: str
    owner: str
    content: str
    kind: Kind
    status: Status
    about: str | None
    visibility: Visibility
    sources: tuple[str, ...] = ()
    replaces: str | None = None  # the change id of the entry's current state, if any
    promoted_from: tuple[str, ...] = ()  # session Change ids, for a promotion


@dataclass(frozen=True)
class MadeBy:
    """What made a version: `person` (a person or the org's service), `consolidation` (a
    learning job) or `promotion`, and who or which job."""

    kind: Maker
    person: str | None = None
    service: str | None = None
    job: str | None = None


@dataclass(frozen=True)
class AgentChange:
    """One recorded change of one agent entry."""

    id: str
    version: int
    op: ChangeOp
    maker: Maker
    person: str | None
    key: str
    content: str
    kind: Kind
    status: Status
    about: str | None
    visibility: Visibility
    before_content: str | None
    before_status: Status | None
    at: int
    job: str | None
    sources: tuple[Source, ...]
    owner: str = SHARED

    @property
    def name(self) -> str:
        """The name of the entry it changed (`listed_key`)."""
        return listed_key(self.key, self.owner)


@dataclass(frozen=True)
class LogEntry:
    """A11: one version of an agent's memory: when, what made it, and the names (`listed_key`)
    of the entries it changed that the caller may see."""

    version: int
    at: int
    maker: Maker
    person: str | None
    keys: tuple[str, ...]
