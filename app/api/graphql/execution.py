"""GraphQL execution with shortcuts, for views that answer thousands of plain fields.

graphql-core completes every field alike: it builds the field's resolve info and path, calls
its resolver, then checks the value's type to complete it, through half a dozen calls per
object. Most fields of a nested view (session -> entries -> sources -> turn) read what is
already loaded, and that round costs more than the read. So two kinds of field are completed
in place; every other field runs as graphql-core runs it:

- a leaf: a field that has no resolver of its own (Strawberry's basic field, which reads the
  attribute), no arguments and a scalar or enum type, read and serialized;
- an object field: a field with no arguments and no directives whose type is an object type
  without an `is_type_of` check (or a list of one), and which either has no resolver of its
  own or has one marked `in_place` (its answer read off its object alone, when it is there).
  Its objects' fields are executed here again, with their paths, and an error inside is
  handled where graphql-core handles it.

Whenever a value would be an error of the completion itself (null where the type says non-null,
a value its scalar refuses, a list that is none, a read that raises), nothing of the field has
run yet, and the field, or for a leaf its whole object, runs the ordinary way, which reports it
as graphql-core reports it.

The setting `graphql_fast_path` (on by default) turns the shortcuts on: with it off, every field
runs as graphql-core runs it, which the GraphQL tests check gives the same answers.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, TypeVar

from graphql import (
    GraphQLID,
    GraphQLLeafType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLString,
    Undefined,
    is_leaf_type,
)
from graphql.pyutils import AwaitableOrValue, Path
from graphql.pyutils.gather_with_cancel import gather_with_cancel
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext
from strawberry.schema.schema_converter import GraphQLCoreConverter

from app.api.graphql.context import settings_of

# A leaf read in place: its resolver (called with the source alone), its scalar or enum type,
# whether it may be null, and whether a str is its own serialization (String and ID).
Leaf = tuple[Callable[..., Any], GraphQLLeafType, bool, bool]
F = TypeVar("F", bound=Callable[..., Any])


class NotRead:
    """What an `in_place` read answers when the value is not there: the resolver must run."""


NOT_READ = NotRead()


def in_place(read: Callable[[Any, Any], Any]) -> Callable[[F], F]:
    """Mark a resolver whose answer `read(source, context)` can give without it, or `NOT_READ`
    when it cannot (then the resolver runs as usual). `read` only reads: it runs before the
    resolver would, and may run again when the ordinary completion reports an error."""

    def mark(resolver: F) -> F:
        resolver.__in_place__ = read  # type: ignore[attr-defined]
        return resolver

    return mark


@dataclass(frozen=True)
class Nested:
    """An object field completed in place: how it is read, its object type, whether it is a
    list, and whether the field and the list's items may be null."""

    read: Callable[..., Any]  # of the source, and with_context, of the context too
    with_context: bool
    object_type: GraphQLObjectType
    return_type: GraphQLOutputType
    item_type: GraphQLOutputType | None  # the list's item type; None: not a list
    nullable: bool
    items_nullable: bool


@dataclass(frozen=True)
class Plan:
    """One field set: the set itself (kept, so that its id stays its own), its leaves and
    object fields completed in place, the fields that run the ordinary way, and whether the
    leaves then the object fields are the document's order (no reordering needed)."""

    field_set: Any
    leaves: dict[str, Leaf]
    nested: dict[str, Nested]
    others: dict[str, Any]
    in_order: bool


class _Refused(Exception):
    """A leaf whose value the ordinary completion must report (a null or refused value)."""


class _Ordinary:
    """An object field whose value the ordinary completion must complete (and report)."""


ORDINARY = _Ordinary()

# What a field completed in place is when it is done (an object, a list, a null): no awaitable.
_COMPLETED = frozenset({dict, list, type(None)})


class Execution(StrawberryGraphQLCoreExecutionContext):
    """Strawberry's execution context, with plain leaves and object fields completed in place
    (with `graphql_fast_path` off, it executes exactly as Strawberry's)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # per field set of this execution (graphql-core memoizes them by identity)
        self._plans: dict[int, Plan] = {}
        # An object of leaves only, completed once per object and field: many items cite the
        # same turn, and its `{id at}` is the same dict wherever it stands (by the identity
        # of the object, which is held here, and of the field's details).
        self._leaves_of: dict[tuple[int, int], tuple[Any, Any]] = {}
        middleware = self.middleware_manager
        self._shortcut = (middleware is None or not middleware.middlewares) and settings_of(
            self.context_value
        ).graphql_fast_path

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
        plan = self._plans.get(id(grouped_field_set))
        if plan is None or plan.field_set is not grouped_field_set:
            plan = self._plan(parent_type, grouped_field_set)
        if not plan.leaves and not plan.nested:
            return super().execute_fields(
                parent_type, source_value, path, grouped_field_set, position_context
            )
        read: dict[str, Any] = {}
        try:
            for name, (resolve, kind, nullable, plain) in plan.leaves.items():
                value = resolve(source_value)
                read[name] = value if plain and type(value) is str else _serialized(
                    kind, nullable, value
                )
        except Exception:  # (a read that raises, or a value the completion must report)
            return super().execute_fields(
                parent_type, source_value, path, grouped_field_set, position_context
            )
        others = plan.others
        waiting: list[str] = []
        rest: AwaitableOrValue[dict[str, Any]] = {}
        try:
            for name, nested in plan.nested.items():
                details = grouped_field_set[name]
                completed = self._nested(nested, parent_type, name, details, path, source_value)
                if completed is ORDINARY:
                    others = {**others, name: details}
                    continue
                read[name] = completed
                if type(completed) not in _COMPLETED and self.is_awaitable(completed):
                    waiting.append(name)
            if others:
                rest = super().execute_fields(parent_type, source_value, path, others, None)
        except Exception:  # a non-null field's error ends the object: settle what is pending
            if waiting:
                self.settle_in_background([read[name] for name in waiting])
            raise
        if waiting or (others and self.is_awaitable(rest)):
            return self._merged(grouped_field_set, read, waiting, rest)
        if plan.in_order and not others:
            return read
        return _in_order(grouped_field_set, read, rest)  # type: ignore[arg-type]

    async def _merged(
        self, grouped_field_set: Any, read: dict[str, Any], waiting: Sequence[str],
        rest: AwaitableOrValue[dict[str, Any]],
    ) -> dict[str, Any]:
        awaited = await gather_with_cancel(
            *(read[name] for name in waiting), *([rest] if self.is_awaitable(rest) else [])
        )
        read.update(zip(waiting, awaited[: len(waiting)], strict=True))
        if self.is_awaitable(rest):
            rest = awaited[-1]
        return _in_order(grouped_field_set, read, rest)  # type: ignore[arg-type]

    def _nested(
        self, nested: Nested, parent_type: GraphQLObjectType, name: str, details: Any,
        path: Path | None, source: Any,
    ) -> Any:
        """An object field's completed value, or ORDINARY when its completion must report an
        error of its own (before anything of it ran)."""
        try:
            value = nested.read(source, self.context_value) if nested.with_context else (
                nested.read(source)
            )
        except Exception:  # (an attribute that raises: reported where graphql-core does)
            return ORDINARY
        if value is NOT_READ:
            return ORDINARY
        if value is None:
            return None if nested.nullable else ORDINARY
        if nested.item_type is None:
            key = (id(value), id(details))
            done = self._leaves_of.get(key)
            if done is not None and done[0] is value:
                return done[1]
        else:
            key = None
            if not isinstance(value, list | tuple) or not self._typed(nested, value):
                return ORDINARY
        field_path = Path(path, name, parent_type.name)
        fields = self.collect_subfields(nested.object_type, details)[0]
        completed: AwaitableOrValue[Any]
        errors = len(self.collected_errors.errors)
        try:
            if key is not None:
                completed = self.execute_fields(
                    nested.object_type, value, field_path, fields, None
                )
            else:
                completed = self._list(nested, details, field_path, fields, value)
        except Exception as raw_error:
            self.handle_field_error(raw_error, nested.return_type, details, field_path)
            return None
        if self.is_awaitable(completed):
            return self._guarded(completed, nested.return_type, details, field_path)
        if key is not None and errors == len(self.collected_errors.errors) and self._only_leaves(
            nested.object_type, fields
        ):
            self._leaves_of[key] = (value, completed)
        return completed

    def _only_leaves(self, object_type: GraphQLObjectType, fields: Any) -> bool:
        """Whether an object's field set is completed from its leaves alone, read in place: its
        completion depends on the object and nothing else."""
        plan = self._plan(object_type, fields)
        return not plan.nested and not plan.others

    def _typed(self, nested: Nested, values: Sequence[Any]) -> bool:
        """Whether no value is a null the type refuses (objects of types with an `is_type_of`
        are not completed in place, so there is nothing else to check)."""
        return nested.items_nullable or all(one is not None for one in values)

    def _list(
        self, nested: Nested, details: Any, path: Path, fields: Any, values: Sequence[Any]
    ) -> AwaitableOrValue[list[Any]]:
        """A list of objects, each executed in place; an error in one is handled at its index,
        as graphql-core's list completion handles it."""
        assert nested.item_type is not None
        completed: list[Any] = []
        waiting: list[int] = []
        for index, one in enumerate(values):
            if one is None:
                completed.append(None)
                continue
            item_path = Path(path, index, None)
            try:
                result = self.execute_fields(nested.object_type, one, item_path, fields, None)
            except Exception as raw_error:
                try:
                    self.handle_field_error(raw_error, nested.item_type, details, item_path)
                except Exception:
                    if waiting:
                        self.settle_in_background([completed[i] for i in waiting])
                    raise
                result = None
            if type(result) is not dict and self.is_awaitable(result):
                result = self._guarded(result, nested.item_type, details, item_path)
                waiting.append(index)
            completed.append(result)
        if not waiting:
            return completed

        async def gathered() -> list[Any]:
            awaited = await gather_with_cancel(*(completed[i] for i in waiting))
            for index, result in zip(waiting, awaited, strict=True):
                completed[index] = result
            return completed

        return gathered()

    async def _guarded(
        self, completed: Awaitable[Any], kind: GraphQLOutputType, details: Any, path: Path
    ) -> Any:
        try:
            return await completed
        except Exception as raw_error:
            self.handle_field_error(raw_error, kind, details, path)
            return None

    def _plan(self, parent_type: GraphQLObjectType, grouped_field_set: Any) -> Plan:
        plan = self._plans.get(id(grouped_field_set))
        if plan is None or plan.field_set is not grouped_field_set:
            leaves: dict[str, Leaf] = {}
            nested: dict[str, Nested] = {}
            others: dict[str, Any] = {}
            for name, details in grouped_field_set.items():
                leaf = self._leaf(parent_type, details)
                inner = None if leaf is not None else self._object(parent_type, details)
                if leaf is not None:
                    leaves[name] = leaf
                elif inner is not None:
                    nested[name] = inner
                else:
                    others[name] = details
            in_order = list(grouped_field_set) == [*leaves, *nested]
            plan = Plan(grouped_field_set, leaves, nested, others, in_order)
            self._plans[id(grouped_field_set)] = plan
        return plan

    def _plain(self, parent_type: GraphQLObjectType, details: Any) -> Any:
        """The field `details` ask for, if neither it nor the document gives it arguments."""
        field = self.schema.get_field(parent_type, details[0].node.name.value)
        if field is None or field.args or field.resolve is None or any(
            d.node.arguments for d in details
        ):
            return None
        return field

    def _leaf(self, parent_type: GraphQLObjectType, details: Any) -> Leaf | None:
        field = self._plain(parent_type, details)
        read = None if field is None else _basic(field)
        if read is None:
            return None
        kind, nullable = _nullable(field.type)
        if not is_leaf_type(kind):
            return None
        return read, kind, nullable, kind is GraphQLString or kind is GraphQLID

    def _object(self, parent_type: GraphQLObjectType, details: Any) -> Nested | None:
        field = self._plain(parent_type, details)
        if field is None or any(d.node.directives for d in details):
            return None
        basic = _basic(field)
        read = basic if basic is not None else _in_place_read(field)
        if read is None:
            return None
        kind, nullable = _nullable(field.type)
        item_type: GraphQLOutputType | None = None
        items_nullable = True
        if isinstance(kind, GraphQLList):
            item_type = kind.of_type
            kind, items_nullable = _nullable(item_type)
        if not isinstance(kind, GraphQLObjectType) or kind.is_type_of is not None:
            return None
        return Nested(read, basic is None, kind, field.type, item_type, nullable, items_nullable)


def _nullable(kind: GraphQLOutputType) -> tuple[GraphQLOutputType, bool]:
    """A type without its non-null wrapper, and whether it may be null."""
    if isinstance(kind, GraphQLNonNull):
        return kind.of_type, False
    return kind, True


def _basic(field: Any) -> Callable[[Any], Any] | None:
    """The read of Strawberry's basic field (no resolver of its own and no extensions, such as
    permissions, around it): its attribute, read as Strawberry reads it (`getattr`, unless the
    field has another default resolver)."""
    definition = field.extensions.get(GraphQLCoreConverter.DEFINITION_BACKREF)
    if not getattr(field.resolve, "_is_default", False) or not getattr(
        definition, "is_basic_field", False
    ):
        return None
    if definition.default_resolver is getattr and definition.python_name:
        return attrgetter(definition.python_name)
    resolve: Callable[[Any], Any] = field.resolve
    return resolve


def _in_place_read(field: Any) -> Callable[[Any, Any], Any] | None:
    """The read of a resolver marked `in_place` (of the source and the context), or None."""
    definition = field.extensions.get(GraphQLCoreConverter.DEFINITION_BACKREF)
    resolver = getattr(definition, "base_resolver", None)
    read: Callable[[Any, Any], Any] | None = getattr(
        getattr(resolver, "wrapped_func", None), "__in_place__", None
    )
    return read


def _serialized(kind: GraphQLLeafType, nullable: bool, value: Any) -> Any:
    """A leaf's value as graphql-core completes it; _Refused where that would be an error."""
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
