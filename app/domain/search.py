"""Search's records: an entry a full-text query matched."""

from __future__ import annotations

from dataclasses import dataclass

from app.domain.agents import AgentEntry
from app.domain.sessions import Entry


@dataclass(frozen=True, slots=True)
class Match:
    """An entry the query matched: a session entry (`entry`, with its `session`) or an agent
    entry (`agent_entry`), and whether its key is the query itself."""

    exact: bool
    agent: str
    session: str | None = None
    entry: Entry | None = None
    agent_entry: AgentEntry | None = None

    @property
    def made(self) -> Entry | AgentEntry:
        """The entry matched, of either kind (its key, content, update time and change)."""
        made = self.entry if self.entry is not None else self.agent_entry
        assert made is not None
        return made
