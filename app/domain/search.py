"""Search's records: an entry a full-text query matched, with its rank."""

from __future__ import annotations

from dataclasses import dataclass

from app.domain.agents import AgentEntry
from app.domain.sessions import Entry


@dataclass(frozen=True, slots=True)
class Match:
    """An entry the query matched: a session entry (`entry`, with its `session`) or an agent
    entry (`agent_entry`), its full-text score, and whether its key is the query itself."""

    score: float
    exact: bool
    agent: str
    session: str | None = None
    entry: Entry | None = None
    agent_entry: AgentEntry | None = None
