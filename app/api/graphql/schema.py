"""The schema: the root query, the merged mutations, the subscriptions (live views), and the
SDL `schema.graphql` holds."""

from __future__ import annotations

from typing import Any

import strawberry
from graphql import GraphQLError
from strawberry.extensions import ValidationCache
from strawberry.schema.config import StrawberryConfig

from app.api.graphql.agents import (
    AGENTS,
    SESSIONS,
    Agent,
    AgentMutation,
    sessions_connection,
)
from app.api.graphql.connections import DEFAULT_FIRST, Connection, connection, page_of
from app.api.graphql.context import GraphInfo
from app.api.graphql.errors import ServiceErrors, log_errors
from app.api.graphql.execution import Execution
from app.api.graphql.limits import (
    DOCUMENTS_CACHED,
    AliasLimit,
    CostLimit,
    DepthLimit,
    TokenLimit,
)
from app.api.graphql.operations import OperationMetrics
from app.api.graphql.scalars import EPOCH_MILLIS, EpochMillis
from app.api.graphql.search import SearchQuery
from app.api.graphql.sessions import SOURCE_TURNS, HistoryMutation, MemoryMutation, Session
from app.api.graphql.subscriptions import Subscription
from app.api.graphql.timeline import anywhere, asks, item_fields, selected
from app.domain.sessions import ITEM_FIELDS


@strawberry.type
class Query(SearchQuery):
    @strawberry.field
    async def session(self, info: GraphInfo, id: strawberry.ID) -> Session | None:
        ctx = info.context
        # A document that asks for its sources' turns reads them with the view (one statement),
        # and of the sources' items, only the properties it asks; unless it reads sessions
        # inside too (a change's, an agent's), which then share the view read whole, so that
        # this session costs one statement however often the document asks it.
        entries = ("session", "memory", "entries")
        inside = [selection for field in info.selected_fields for selection in field.selections]
        if any(asks(info.selected_fields, (*entries, *path)) for path in SOURCE_TURNS):
            names = set().union(*(
                selected(info.selected_fields, (*entries, *path[:-1])) for path in SOURCE_TURNS
            ))
            whole = anywhere(inside, {"session", "sessions"})
            loader = ctx.sessions_with_turns(ITEM_FIELDS if whole else item_fields(names))
        else:
            loader = ctx.sessions
        return Session.maybe(await loader.load(str(id)))

    @strawberry.field(description="The sessions the caller may reach (one agent's, with "
                      "`agent`), oldest first.")
    async def sessions(
        self, info: GraphInfo, first: int = DEFAULT_FIRST, after: str | None = None,
        agent: str | None = None,
    ) -> Connection[Session]:
        ctx = info.context
        page = page_of(SESSIONS, first, after)
        ids = await ctx.service.pages.session_ids(ctx.who, agent, page.after, first)
        return await sessions_connection(info, page, ids)

    @strawberry.field
    async def agent(self, info: GraphInfo, id: strawberry.ID) -> Agent | None:
        return Agent.maybe(await info.context.agents.load(str(id)))

    @strawberry.field(description="The org's agents, oldest first.")
    async def agents(
        self, info: GraphInfo, first: int = DEFAULT_FIRST, after: str | None = None
    ) -> Connection[Agent]:
        ctx = info.context
        page = page_of(AGENTS, first, after)
        found = await ctx.service.pages.agents(ctx.who, page.after, first)
        return connection(
            AGENTS, page, found, lambda a: (a.created_at, a.id), Agent.from_domain
        )


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
    execution_context_class=Execution,  # plain leaves completed in place (execution.py)
    extensions=[
        OperationMetrics,
        ServiceErrors,
        TokenLimit,
        DepthLimit,
        AliasLimit,
        CostLimit,
        # After the limits: each document is validated once, then reused (and parsed once:
        # TokenLimit).
        lambda: ValidationCache(maxsize=DOCUMENTS_CACHED),
    ],
)


def export_schema() -> str:
    """The SDL that `schema.graphql` holds."""
    return schema.as_str() + "\n"
