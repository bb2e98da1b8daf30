"""An operation's variables: text that storage can keep, checked before the operation runs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from graphql import (
    ArgumentNode,
    DocumentNode,
    ExecutionResult,
    GraphQLError,
    ListValueNode,
    ObjectFieldNode,
    ValueNode,
    VariableNode,
    Visitor,
    visit,
)
from strawberry.extensions import SchemaExtension

from app.api.bodies import broken_text
from app.errors import ValidationError


class TextVariables(SchemaExtension):
    """A variable holding a lone surrogate (JSON's escaped half of a pair) is refused before
    the operation runs, whichever argument it fills: a ValidationError naming that argument
    (and the path inside the variable's value), as REST names the body's field."""

    def on_execute(self) -> Iterator[None]:
        context = self.execution_context
        broken = broken_text(context.variables) if context.variables else None
        if broken is not None and context.graphql_document is not None:
            variable, _, inside = broken.partition(".")
            argument = _argument_of(context.graphql_document, variable)
            field = f"{argument}.{inside}" if inside else argument
            error = ValidationError(f"{field}: not valid Unicode text (a lone surrogate)", field)
            context.result = ExecutionResult(
                None, [GraphQLError(error.message, original_error=error)]
            )
        yield


def _argument_of(document: DocumentNode, variable: str) -> str:
    """The name of the first argument (or input field) the variable fills; else its own."""
    found: list[str] = []

    class Uses(Visitor):
        def enter_argument(self, node: ArgumentNode, *_: Any) -> None:
            if _fills(node.value, variable):
                found.append(node.name.value)

        def enter_object_field(self, node: ObjectFieldNode, *_: Any) -> None:
            if _fills(node.value, variable):
                found.append(node.name.value)

    visit(document, Uses())
    return found[0] if found else variable


def _fills(value: ValueNode, variable: str) -> bool:
    if isinstance(value, VariableNode):
        return value.name.value == variable
    return isinstance(value, ListValueNode) and any(_fills(v, variable) for v in value.values)
