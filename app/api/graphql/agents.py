"""Agents: the configured assistants of an org, and their sessions."""

from __future__ import annotations

from typing import Annotated

import strawberry

from app.api.graphql.context import GraphInfo
from app.api.graphql.scalars import page
from app.api.graphql.sessions import Session
from app.memory import values


@strawberry.type
class Agent:
    """A configured assistant of an org."""

    id: str
    name: str
    shared: bool
    model: str | None

    @classmethod
    def from_domain(cls, agent: values.Agent) -> Agent:
        return cls(id=agent.id, name=agent.name, shared=agent.shared, model=agent.model)

    @classmethod
    def maybe(cls, agent: values.Agent | None) -> Agent | None:
        return None if agent is None else cls.from_domain(agent)

    @strawberry.field
    async def sessions(
        self, info: GraphInfo, offset: int = 0, limit: int = 50
    ) -> list[Annotated[Session, strawberry.lazy("app.api.graphql.sessions")]]:
        ids = await info.context.agent_sessions(*page(offset, limit)).load(self.id)
        views = await info.context.sessions.load_many(ids)
        return [session for session in map(Session.maybe, views) if session is not None]
