"""What the service answers, as typed models, and the commands a client sends.

Attributes are snake_case; each reads the service's camelCase field (`updated_at` is
`updatedAt`). Answers ignore fields this client does not know, so a newer service still reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

Kind = Literal["fact", "decision", "preference", "procedure", "hypothesis"]
AgentKind = Literal["decision", "preference", "procedure"]
SessionKind = Literal["chat", "review", "subagent"]
Visibility = Literal["shared", "private"]
ItemType = Literal["message", "tool_call", "tool_result", "app_action", "approval"]
Role = Literal["user", "assistant", "tool", "system"]


class Model(BaseModel):
    """An answer of the service: frozen, camelCase on the wire."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, frozen=True, extra="ignore"
    )


class Agent(Model):
    id: str
    name: str
    shared: bool
    model: str | None = None


class Entry(Model):
    """S1: one fact under one key; `sources` are the ids of the items behind it."""

    key: str
    content: str
    kind: str
    sources: list[str]
    updated_at: int
    status: str


class Switches(Model):
    use: bool
    generate: bool


class Overrides(Model):
    """What a session sets itself; None where it follows the org."""

    use: bool | None = None
    generate: bool | None = None


class Memory(Model):
    """S2: entries by key, the items consolidation processed, the switches in force."""

    entries: dict[str, Entry]
    processed: list[str]
    settings: Switches
    overrides: Overrides


class Session(Model):
    id: str
    agent: str
    kind: str
    head: str
    revision: int
    person: str | None = None
    model: str | None = None
    parent: str | None = None
    forked_from: str | None = None
    forked_at: str | None = None
    created_at: int


class SessionView(Model):
    """The Session view: the session (with the head and revision to send back) and memory."""

    session: Session
    memory: Memory


class Item(Model):
    id: str
    type: str
    role: str | None = None
    content: str | None = None
    app: str | None = None
    author: str | None = None
    at: int
    turn: str | None = None


class Turn(Model):
    id: str
    status: str
    model: str | None = None
    items: list[str]
    shown: list[str]
    shown_agent: list[str]
    at: int
    completed_at: int | None = None


class TurnSession(Model):
    id: str
    head: str
    revision: int


class RunRef(Model):
    id: str
    status: str


class TurnView(Model):
    """A recorded turn, its session's head and revision after it, and (with `wait`) its run."""

    turn: Turn
    session: TurnSession
    run: RunRef | None = None


class IncludedKeys(Model):
    session: list[str]
    agent: list[str]


class Instructions(Model):
    """The memory text the next turn's model is given, and the keys in it."""

    memory: str
    included: IncludedKeys


class Dropped(Model):
    op: str | None = None
    key: str | None = None
    reason: str | None = None
    proposal: str | None = None


class Run(Model):
    """A consolidation run: its state, what it read, the changes it kept and dropped."""

    id: str
    status: str
    model: str | None = None
    trigger: str | None = None
    error: str | None = None
    queued_at: int | None = None
    started_at: int | None = None
    finished_at: int | None = None
    attempts: int | None = None
    head: str | None = None
    session: str
    turn: str | None = None
    read: list[str]
    tried: list[str]
    kept: list[str]
    dropped: list[Dropped]

    @property
    def finished(self) -> bool:
        return self.status not in ("queued", "running")


class LearningDropped(Dropped):
    session: str | None = None


class LearningJob(Model):
    id: str
    status: str
    model: str | None = None
    error: str | None = None
    queued_at: int | None = None
    started_at: int | None = None
    finished_at: int | None = None
    attempts: int | None = None
    agent: str | None = None
    read: list[str]
    tried: list[str]
    kept: list[str]
    dropped: list[LearningDropped]
    sessions: list[str]

    @property
    def finished(self) -> bool:
        return self.status not in ("queued", "running")


class Version(Model):
    id: str
    cause: str
    at: int
    parent: str | None = None
    reverted_from: str | None = None
    added: list[str]
    current: bool


class VersionRef(Model):
    id: str
    cause: str
    at: int


class VersionMemory(Model):
    entries: dict[str, Entry]
    processed: list[str]


class VersionView(Model):
    """A version as it was: its memory and a page of its timeline."""

    version: VersionRef
    memory: VersionMemory
    items: list[Item]


class OrgSettings(Model):
    memory: Switches
    agent_memory: bool
    helper_model: str | None = None
    model: str | None = None


class AgentSource(Model):
    session: str
    item: str


class AgentEntry(Model):
    key: str
    content: str
    kind: str
    sources: list[AgentSource]
    updated_at: int
    status: str
    about: str | None = None
    visibility: str


class AgentMemory(Model):
    """A10: the agent's memory as the caller may see it, and the version to send back."""

    entries: dict[str, AgentEntry]
    version: int


class Promoted(Model):
    agent: Agent
    memory: AgentMemory


class ErasureCounts(Model):
    """What an erasure made tombstones of."""

    sessions: int
    items: int
    entries: int
    agent_entries: int
    changes: int
    jobs: int


class Erasure(Model):
    """A person's erasure: its id, the person as asked, when, and its counts."""

    id: str
    person: str
    at: int
    counts: ErasureCounts


class ErasureView(Model):
    erasure: Erasure


class Erasures(Model):
    erasures: list[Erasure]


class Deleted(Model):
    deleted: str


class LogEntry(Model):
    """A11: one version of an agent's memory: when, what made it, who, the keys."""

    version: int
    at: int
    maker: str
    person: str | None = None
    keys: list[str]


class HitEntry(Model):
    """A search hit's entry: a session entry (with `session`) or an agent entry (`agent`)."""

    key: str
    content: str
    kind: str
    status: str
    updated_at: int
    sources: list[Any]
    session: str | None = None
    agent: str | None = None
    about: str | None = None
    visibility: str | None = None


class Hit(Model):
    """A hit: its entry, the key the caller's view lists it under (`key@person` for a private
    agent entry), its score and snippet."""

    entry: HitEntry
    listed_as: str
    score: float
    snippet: str


class SearchResults(Model):
    hits: list[Hit]


# The lists the service answers under one key.
class Agents(Model):
    agents: list[Agent]


class Sessions(Model):
    sessions: list[SessionView]


class Runs(Model):
    runs: list[Run]


class LearningJobs(Model):
    jobs: list[LearningJob]


class Versions(Model):
    versions: list[Version]


class AgentLog(Model):
    changes: list[LogEntry]


# What a client sends.
class Body(BaseModel):
    """A request body part: validated when made, sent as the service's JSON."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(exclude_unset=True)


class TurnItem(Body):
    """One item of a turn. `id` is yours: a turn sent again with the same ids is one turn."""

    type: ItemType = "message"
    role: Role
    content: str
    id: str | None = None
    app: str | None = None

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


class Command(Body):
    """A session memory command (S12): Remember, Forget, Configure or Refresh."""

    def to_json(self) -> dict[str, Any]:
        return {"_tag": type(self).__name__, **self.model_dump(exclude_unset=True)}


class Remember(Command):
    """S13: add or replace the entry under `key`, active."""

    key: str
    content: str
    kind: Kind = "fact"

    def to_json(self) -> dict[str, Any]:
        return {"_tag": "Remember", "key": self.key, "content": self.content, "kind": self.kind}


class Forget(Command):
    """S14: mark the entry retracted."""

    key: str


class Configure(Command):
    """S15: True/False set a switch, None removes the override, a switch not given is kept."""

    use: bool | None = None
    generate: bool | None = None


class Refresh(Command):
    """S16: consolidate now with the session's model."""


class AgentCommand(Body):
    """An agent memory command (A10): AgentRemember or AgentForget."""

    tag: str = ""

    def to_json(self) -> dict[str, Any]:
        fields = self.model_dump(exclude_none=True, exclude={"tag"})
        return {"_tag": self.tag, **fields}


class AgentRemember(AgentCommand):
    tag: Literal["Remember"] = "Remember"
    key: str
    content: str
    kind: AgentKind
    about: str | None = None
    visibility: Visibility = "shared"


class AgentForget(AgentCommand):
    tag: Literal["Forget"] = "Forget"
    key: str
    about: str | None = None


def items_of(items: Sequence[TurnItem | dict[str, Any]]) -> list[dict[str, Any]]:
    """Turn items as JSON: a TurnItem, or a dict checked as one."""
    return [
        (item if isinstance(item, TurnItem) else TurnItem.model_validate(item)).to_json()
        for item in items
    ]
