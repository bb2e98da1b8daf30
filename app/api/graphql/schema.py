"""The schema: the root query, the merged mutations, the subscriptions (live views), and the
SDL `schema.graphql` holds."""

from __future__ import annotations

from typing import Any

import strawberry
from graphql import GraphQLError
from strawberry.extensions import MaxAliasesLimiter, QueryDepthLimiter
from strawberry.schema.config import StrawberryConfig

from app.api.graphql.agents import Agent, AgentMutation
from app.api.graphql.context import GraphInfo
from app.api.graphql.errors import ServiceErrors, log_errors
from app.api.graphql.limits import CostLimit, TokenLimit
from app.api.graphql.operations import OperationMetrics
from app.api.graphql.scalars import EPOCH_MILLIS, EpochMillis, page
from app.api.graphql.search import SearchQuery
from app.api.graphql.sessions import HistoryMutation, MemoryMutation, Session
from app.api.graphql.subscriptions import Subscription


@strawberry.type
class Query(SearchQuery):
    @strawberry.field
    async def session(self, info: GraphInfo, id: strawberry.ID) -> Session | None:
        return Session.maybe(await info.context.sessions.load(str(id)))

    @strawberry.field
    async def sessions(
        self, info: GraphInfo, offset: int = 0, limit: int = 50, agent: str | None = None
    ) -> list[Session]:
        ctx = info.context
        views = await ctx.service.sessions.list_sessions(ctx.who, agent, *page(offset, limit))
        return [Session.from_domain(view) for view in views]

    @strawberry.field
    async def agent(self, info: GraphInfo, id: strawberry.ID) -> Agent | None:
        return Agent.maybe(await info.context.agents.load(str(id)))

    @strawberry.field
    async def agents(self, info: GraphInfo, offset: int = 0, limit: int = 50) -> list[Agent]:
        ctx = info.context
        return [
            Agent.from_domain(agent)
            for agent in await ctx.service.agents.page(ctx.who, *page(offset, limit))
        ]


@strawberry.type
class Mutation(MemoryMutation, HistoryMutation, AgentMutation):
    pass


class Schema(strawberry.Schema):
    """Strawberry's schema, logging errors our way (`log_errors`), not each with a traceback."""

    def process_errors(self, errors: list[GraphQLError], execution_context: Any = None) -> None:
        log_errors(errors)


schema = Schema(
    query=Query,
    mutation=Mutation,
    subscription=Subscription,
    config=StrawberryConfig(scalar_map={EpochMillis: EPOCH_MILLIS}),
    extensions=[
        OperationMetrics,
        ServiceErrors,
        lambda: QueryDepthLimiter(max_depth=12),
        lambda: MaxAliasesLimiter(max_alias_count=30),
        TokenLimit,
        CostLimit,
    ],
)


def export_schema() -> str:
    """The SDL that `schema.graphql` holds."""
    return schema.as_str() + "\n"
