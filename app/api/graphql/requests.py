"""What an operation's request must hold before the operation runs: the name of the operation
to run where its document has several, variables whose text storage can keep, and, on a
WebSocket, a token that still signs it in."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from graphql import (
    ArgumentNode,
    DocumentNode,
    ExecutionResult,
    FragmentDefinitionNode,
    GraphQLError,
    ListValueNode,
    ObjectFieldNode,
    OperationDefinitionNode,
    ValueNode,
    VariableNode,
    Visitor,
    get_operation_ast,
    visit,
)
from starlette.websockets import WebSocket
from strawberry.extensions import SchemaExtension
from strawberry.types.graphql import OperationType

from app.api.bodies import broken_text, not_text
from app.api.graphql.context import Context
from app.errors import ValidationError


class RequestChecks(SchemaExtension):
    """Refuses, before the operation runs, as a request error (no data, a ValidationError):
    - a document of several operations without `operationName` (GraphQL's GetOperation;
      Strawberry would run the first), on `operationName`;
    - a variable holding a lone surrogate (JSON's escaped half of a pair), whichever argument
      it fills, on that argument (and the path inside the variable's value), as REST names the
      body's field."""

    def on_execute(self) -> Iterator[None]:
        context = self.execution_context
        document = context.graphql_document
        if document is not None:
            # the name the request gave (`operation_name` falls back to the first operation's)
            asked: str | None = getattr(context, "_provided_operation_name", None)
            error = _unnamed_choice(document, asked) or _broken_variable(
                document, asked, context.variables
            )
            if error is not None:
                if isinstance(getattr(context.context, "request", None), WebSocket):
                    # a stream (the WebSocket) answers the error its on_execute raises; it does
                    # not read `result`
                    raise error
                context.result = ExecutionResult(
                    None, [GraphQLError(error.message, original_error=error)]
                )
        yield


class SocketSignedIn(SchemaExtension):
    """An operation a WebSocket carries (a query, a mutation, a subscription's start) runs only
    while the token that signed the socket in still does: once it is revoked (or its person
    erased) it is refused as a request with the token is, Unauthorized. A subscription checks
    again before each event (`Context.next_event`). Each operation runs with loaders of its
    own, as a request over HTTP does: the socket's one context would answer a later operation
    from what an earlier one read."""

    async def on_execute(self) -> AsyncIterator[None]:
        context = self.execution_context.context
        fresh: Context | None = None
        if isinstance(context, Context) and isinstance(context.request, WebSocket):
            await context.still_signed_in()
            fresh = self.execution_context.context = context.fresh()
        yield
        if fresh is not None and self.execution_context.operation_type is not (
            OperationType.SUBSCRIPTION  # (its events read on, each with fresh loaders)
        ):
            fresh.release()  # answered: as a request over HTTP lets go of what it read


def _unnamed_choice(document: DocumentNode, name: str | None) -> ValidationError | None:
    if name is not None:
        return None
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    if len(operations) < 2:
        return None
    return ValidationError(
        "the document holds several operations: name the one to run in operationName",
        "operationName",
    )


def _broken_variable(
    document: DocumentNode, asked: str | None, variables: dict[str, Any] | None
) -> ValidationError | None:
    broken = broken_text(variables) if variables else None
    if broken is None:
        return None
    variable, _, inside = broken.partition(".")
    argument = _argument_of(document, asked, variable)
    field = f"{argument}.{inside}" if inside else argument
    return not_text(field)


def _argument_of(document: DocumentNode, asked: str | None, variable: str) -> str:
    """The name of the first argument (or input field) the variable fills in the operation that
    runs, then in the fragments; else the variable's own name."""
    found: list[str] = []

    class Uses(Visitor):
        def enter_argument(self, node: ArgumentNode, *_: Any) -> None:
            if _fills(node.value, variable):
                found.append(node.name.value)

        def enter_object_field(self, node: ObjectFieldNode, *_: Any) -> None:
            if _fills(node.value, variable):
                found.append(node.name.value)

    operation = get_operation_ast(document, asked)
    fragments = [d for d in document.definitions if isinstance(d, FragmentDefinitionNode)]
    for node in (*([operation] if operation is not None else []), *fragments):
        visit(node, Uses())
    return found[0] if found else variable


def _fills(value: ValueNode, variable: str) -> bool:
    if isinstance(value, VariableNode):
        return value.name.value == variable
    return isinstance(value, ListValueNode) and any(_fills(v, variable) for v in value.values)
