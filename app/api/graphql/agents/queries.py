"""The root fields of agents: one by id, and the org's agents."""

from __future__ import annotations

import strawberry

from app.api.graphql.agents import resolvers
from app.api.graphql.agents.resolvers import AGENTS
from app.api.graphql.connections import Connection, connection, page_of
from app.api.graphql.context import GraphInfo
from app.api.graphql.nodes import Agent
from app.memory.paging import DEFAULT_PAGE


@strawberry.type
class AgentQuery:
    @strawberry.field
    async def agent(self, info: GraphInfo, id: strawberry.ID) -> Agent | None:
        return Agent.maybe(await info.context.agents.load(str(id)))

    @strawberry.field(description="The org's agents, oldest first.")
    async def agents(
        self, info: GraphInfo, first: int = DEFAULT_PAGE, after: str | None = None
    ) -> Connection[Agent]:
        page = page_of(AGENTS, first, after)
        found = await resolvers.agents(info.context, page)
        return connection(AGENTS, page, found, lambda a: (a.created_at, a.id), Agent.from_domain)
