"""GraphQL execution with one shortcut, for views that answer thousands of plain fields.

graphql-core completes every field alike: it builds the field's resolve info and path, calls
its resolver, then checks the value's type to complete it. Most fields of a nested view
(session -> entries -> sources -> turn) are scalars read off an object that is already loaded
(`key`, `content`, `id`, `at`), and that round costs more than the read. So a field that has
no resolver of its own (Strawberry's basic field, which reads the attribute), no arguments and
a scalar or enum type is read and serialized in place; every other field runs as graphql-core
runs it. When a value would be an error (null where the type says non-null, or a value its
scalar refuses), the whole object runs the ordinary way, which reports it as it always did.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from graphql import (
    GraphQLLeafType,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLOutputType,
    Undefined,
    is_leaf_type,
)
from graphql.pyutils import AwaitableOrValue, Path
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext

# A leaf read in place: its resolver (called with the source alone), its scalar or enum type,
# and whether it may be null.
Leaf = tuple[Callable[..., Any], GraphQLLeafType, bool]


class _Refused(Exception):
    """A leaf whose value the ordinary completion must report (a null or refused value)."""


class Execution(StrawberryGraphQLCoreExecutionContext):
    """Strawberry's execution context, with plain leaves completed in place."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # per field set of this execution (graphql-core memoizes them by identity): the set,
        # its leaves read in place, and the other fields (the set is kept so its id stays its)
        self._plans: dict[int, tuple[Any, dict[str, Leaf], dict[str, Any]]] = {}
        middleware = self.middleware_manager
        self._shortcut = middleware is None or not middleware.middlewares

    def execute_fields(
        self,
        parent_type: GraphQLObjectType,
        source_value: Any,
        path: Path | None,
        grouped_field_set: Any,
        position_context: Any,
    ) -> AwaitableOrValue[dict[str, Any]]:
        if not self._shortcut or position_context is not None:
            return super().execute_fields(
                parent_type, source_value, path, grouped_field_set, position_context
            )
        _, leaves, others = self._plan(parent_type, grouped_field_set)
        if not leaves:
            return super().execute_fields(
                parent_type, source_value, path, grouped_field_set, position_context
            )
        try:
            read = {name: _complete(leaf, source_value) for name, leaf in leaves.items()}
        except _Refused:
            return super().execute_fields(
                parent_type, source_value, path, grouped_field_set, position_context
            )
        if not others:
            return read
        rest = super().execute_fields(parent_type, source_value, path, others, None)
        if self.is_awaitable(rest):

            async def merged(rest: Awaitable[dict[str, Any]]) -> dict[str, Any]:
                return _in_order(grouped_field_set, read, await rest)

            return merged(rest)
        return _in_order(grouped_field_set, read, rest)  # type: ignore[arg-type]

    def _plan(
        self, parent_type: GraphQLObjectType, grouped_field_set: Any
    ) -> tuple[Any, dict[str, Leaf], dict[str, Any]]:
        plan = self._plans.get(id(grouped_field_set))
        if plan is None or plan[0] is not grouped_field_set:
            leaves: dict[str, Leaf] = {}
            others: dict[str, Any] = {}
            for name, details in grouped_field_set.items():
                leaf = self._leaf(parent_type, details)
                if leaf is None:
                    others[name] = details
                else:
                    leaves[name] = leaf
            plan = (grouped_field_set, leaves, others)
            self._plans[id(grouped_field_set)] = plan
        return plan

    def _leaf(self, parent_type: GraphQLObjectType, details: Any) -> Leaf | None:
        node = details[0].node
        field = self.schema.get_field(parent_type, node.name.value)
        if field is None or field.args or node.arguments or field.resolve is None:
            return None
        if not getattr(field.resolve, "_is_default", False):  # Strawberry's basic field
            return None
        kind: GraphQLOutputType = field.type
        nullable = not isinstance(kind, GraphQLNonNull)
        if isinstance(kind, GraphQLNonNull):
            kind = kind.of_type
        if not is_leaf_type(kind):
            return None
        return field.resolve, kind, nullable


def _complete(leaf: Leaf, source: Any) -> Any:
    """A leaf's value as graphql-core completes it, unless that would be an error."""
    resolve, kind, nullable = leaf
    try:
        value = resolve(source)
    except Exception as exc:  # (an attribute that raises: reported where graphql-core does)
        raise _Refused from exc
    if value is None:
        if nullable:
            return None
        raise _Refused
    try:
        serialized = kind.serialize(value)
    except Exception as exc:
        raise _Refused from exc
    if serialized is None or serialized is Undefined:
        raise _Refused
    return serialized


def _in_order(
    grouped_field_set: Any, read: dict[str, Any], rest: dict[str, Any]
) -> dict[str, Any]:
    """The object's fields in the order the document asks them (graphql-core's order)."""
    return {
        name: read[name] if name in read else rest[name]
        for name in grouped_field_set
        if name in read or name in rest
    }
