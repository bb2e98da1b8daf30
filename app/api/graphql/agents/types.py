"""What a learning job dropped, and the log of an agent's memory."""

from __future__ import annotations

import strawberry

from app.api.graphql.enums import Maker
from app.api.graphql.scalars import EpochMillis
from app.domain.agents import LogEntry


@strawberry.type
class LearnedDrop:
    """A change the helper model proposed that broke a rule, and which one."""

    op: str
    key: str
    reason: str
    proposal: str
    session: str | None


@strawberry.type
class AgentLogEntry:
    """A11: one version of an agent's memory and the keys it changed that the caller may see."""

    version: int
    at: EpochMillis
    maker: Maker
    person: str | None
    keys: list[str]

    @classmethod
    def from_domain(cls, entry: LogEntry) -> AgentLogEntry:
        return cls(
            version=entry.version, at=EpochMillis(entry.at), maker=entry.maker,
            person=entry.person, keys=list(entry.keys),
        )
