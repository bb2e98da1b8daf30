"""What REST answers of agents: an agent, its memory as the caller may see it, and its log."""

from __future__ import annotations

from typing import Annotated

from typing_extensions import TypedDict

from app.api.responses.words import KindWord, StatusWord, words
from app.domain import agents as agent_values
from app.domain.agents import Agent as AgentValue
from app.domain.enums import Maker, Visibility


class Agent(TypedDict):
    id: str
    name: str
    shared: bool
    model: str | None


def agent_json(agent: AgentValue) -> Agent:
    return {"id": agent.id, "name": agent.name, "shared": agent.shared, "model": agent.model}


class Agents(TypedDict):
    agents: list[Agent]


class Source(TypedDict):
    """A3: an item of a session that supports an agent entry."""

    session: str
    item: str


class AgentEntry(TypedDict):
    key: str
    content: str
    kind: KindWord
    sources: list[Source]
    updatedAt: int
    status: StatusWord
    about: str | None
    visibility: Annotated[str, words(Visibility)]


def agent_entry_json(entry: agent_values.AgentEntry) -> AgentEntry:
    return {
        "key": entry.key,
        "content": entry.content,
        "kind": entry.kind,
        "sources": [{"session": s.session, "item": s.item} for s in entry.sources],
        "updatedAt": entry.updated_at,
        "status": entry.status,
        "about": entry.about,
        "visibility": entry.visibility,
    }


class AgentMemory(TypedDict):
    """A10: an agent's memory as the caller may see it, and its version."""

    entries: dict[str, AgentEntry]
    version: int


def agent_memory_json(memory: agent_values.AgentMemory) -> AgentMemory:
    return {
        "entries": {key: agent_entry_json(entry) for key, entry in memory.entries.items()},
        "version": memory.version,
    }


class Promoted(TypedDict):
    """A12: the new agent and its memory."""

    agent: Agent
    memory: AgentMemory


class LogEntry(TypedDict):
    """A11: one version of an agent's memory: when, what made it, the keys the caller sees."""

    version: int
    at: int
    maker: Annotated[str, words(Maker)]
    person: str | None
    keys: list[str]


def log_entry_json(entry: agent_values.LogEntry) -> LogEntry:
    return {
        "version": entry.version,
        "at": entry.at,
        "maker": entry.maker,
        "person": entry.person,
        "keys": list(entry.keys),
    }


class AgentLog(TypedDict):
    changes: list[LogEntry]
