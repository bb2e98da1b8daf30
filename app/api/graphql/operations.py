"""GraphQL operations counted by name and outcome, and conflicts by route, for `/metrics`."""

from __future__ import annotations

import re
from collections.abc import Iterator

from graphql import GraphQLError
from strawberry.extensions import SchemaExtension

from app.errors import AgentConflict, ServiceError, SessionConflict

ROUTE = "/graphql"
CONFLICTS = {"SESSION_CONFLICT": SessionConflict.tag, "AGENT_CONFLICT": AgentConflict.tag}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def outcome_of(errors: list[GraphQLError] | None) -> tuple[str, list[str]]:
    """`ok`, `error` (expected errors only) or `unexpected`; and the conflicts' tags."""
    if not errors:
        return "ok", []
    outcome, conflicts = "error", []
    for error in errors:
        original = error.original_error
        code = (error.extensions or {}).get("code")
        if isinstance(original, ServiceError):
            code = original.code
        if code in CONFLICTS:
            conflicts.append(CONFLICTS[str(code)])
        if original is not None and not isinstance(original, ServiceError):
            outcome = "unexpected"
        if original is None and error.message == "Unexpected error.":
            outcome = "unexpected"
    return outcome, conflicts


class OperationMetrics(SchemaExtension):
    """After each operation: one count by operation name (as the client named it, if sane)
    and outcome, and one per optimistic-concurrency conflict it answered."""

    def on_operation(self) -> Iterator[None]:
        yield
        context = self.execution_context.context
        service = getattr(context, "service", None)
        if service is None:
            return
        metrics = service.db.telemetry.metrics
        name = self.execution_context.operation_name or "anonymous"
        name = name if _NAME.fullmatch(name) else "invalid"
        result = self.execution_context.result
        errors = list(result.errors or []) if result is not None else None
        outcome, conflicts = outcome_of(errors) if result is not None else ("error", [])
        metrics.graphql_operation(name, outcome)
        for tag in conflicts:
            metrics.conflicts.labels(ROUTE, tag).inc()
