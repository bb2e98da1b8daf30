"""The schema: the root query and mutations merged from each noun, the subscriptions (live
views), and the SDL `schema.graphql` holds."""

from __future__ import annotations

from typing import Any

import strawberry
from graphql import GraphQLError
from strawberry.schema.config import StrawberryConfig

from app.api.graphql.agents.mutations import AgentMutation
from app.api.graphql.agents.queries import AgentQuery
from app.api.graphql.erasures.mutations import ErasureMutation
from app.api.graphql.errors import ServiceErrors, log_errors
from app.api.graphql.execution import Execution
from app.api.graphql.limits import (
    AliasLimit,
    CostLimit,
    DepthLimit,
    ParsedOnce,
    TokenLimit,
    ValidatedOnce,
)
from app.api.graphql.operations import OperationMetrics
from app.api.graphql.requests import RequestChecks, SocketSignedIn
from app.api.graphql.scalars import EPOCH_MILLIS, EpochMillis
from app.api.graphql.search.queries import SearchQuery
from app.api.graphql.sessions.mutations import HistoryMutation, MemoryMutation
from app.api.graphql.sessions.queries import SessionQuery
from app.api.graphql.subscriptions import Subscription


@strawberry.type
class Query(SearchQuery, SessionQuery, AgentQuery):
    pass


@strawberry.type
class Mutation(MemoryMutation, HistoryMutation, AgentMutation, ErasureMutation):
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
    # plain leaves and object fields completed in place, unless `graphql_fast_path` is off
    execution_context_class=Execution,
    extensions=[
        OperationMetrics,
        ServiceErrors,
        TokenLimit,
        ParsedOnce,  # with the parser's limits TokenLimit sets
        DepthLimit,
        AliasLimit,
        CostLimit,
        RequestChecks,
        SocketSignedIn,
        # After the limits' rules: each document is validated once, then reused.
        ValidatedOnce,
    ],
)


def export_schema() -> str:
    """The SDL that `schema.graphql` holds."""
    return schema.as_str() + "\n"
