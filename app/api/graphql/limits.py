"""Limits on what one GraphQL document may ask.

- `TokenLimit`: at most `graphql_max_tokens` lexical tokens (and MAX_COMMENTS comments),
  enforced by the parser itself, so a huge document costs no more than reading that many
  tokens. Code `QUERY_TOO_LARGE`.
- `CostLimit`: an estimate of the objects an operation may load, counted before it runs. Each
  field costs 1; a paged field (a connection, or a list with `limit`) multiplies what it selects
  by its page size: its `first` or `limit` argument (its declared default when not given,
  MAX_PAGE when it is a variable). Inside a connection, `edges` and `nodes` are that page (and
  search's `hits` are its), so they multiply by nothing more. A list without pages multiplies
  by UNPAGED_LIST. Over `graphql_max_cost` is refused with `QUERY_TOO_COSTLY`.
- `DepthLimit` and `AliasLimit`: at most MAX_DEPTH levels of nested fields below a root field
  (Strawberry's depth, which counts the root field as 0) and MAX_ALIASES aliases, by
  Strawberry's own validators, whose errors carry no `extensions.code`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import suppress
from functools import cache
from typing import Any

from graphql import (
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLField,
    GraphQLInterfaceType,
    GraphQLList,
    GraphQLNamedType,
    GraphQLObjectType,
    InlineFragmentNode,
    IntValueNode,
    OperationDefinitionNode,
    SelectionSetNode,
    ValidationRule,
    VariableNode,
    get_named_type,
    get_nullable_type,
)
from strawberry.extensions import AddValidationRules, ParserCache, SchemaExtension
from strawberry.extensions.max_aliases import create_validator as create_alias_validator
from strawberry.extensions.query_depth_limiter import (
    create_validator as create_depth_validator,
)

from app.api.graphql.context import settings_of
from app.memory.paging import MAX_PAGE

MAX_COMMENTS = 500
MAX_DEPTH = 12
MAX_ALIASES = 30
UNPAGED_LIST = 10
PAGE_ARGUMENTS = ("limit", "first")
TOO_LARGE = "QUERY_TOO_LARGE"
TOO_COSTLY = "QUERY_TOO_COSTLY"


# Distinct documents kept parsed (`ParsedOnce`) and validated (`ValidationCache`): clients
# send a few documents, again and again.
DOCUMENTS_CACHED = 256


class ParsedOnce(ParserCache):
    """Strawberry's `ParserCache` (each document parsed once, with TokenLimit's limits), except
    that a document that does not parse is left to Strawberry's own parse. `ParserCache` raises
    its error from the parsing hook, outside the guard that makes a parse error the operation's
    answer, so the operation's hooks (metrics, the `QUERY_TOO_LARGE` code) would not see it."""

    def __init__(self) -> None:
        super().__init__(maxsize=DOCUMENTS_CACHED)

    def on_parse(self) -> Iterator[None]:
        context = self.execution_context
        if context.query is not None and context.graphql_document is None:
            with suppress(GraphQLError):
                context.graphql_document = self.cached_parse_document(
                    context.query, **context.parse_options
                )
        yield


class TokenLimit(SchemaExtension):
    """The parser stops at `graphql_max_tokens` lexical tokens and MAX_COMMENTS comments; its
    error has code `QUERY_TOO_LARGE`.

    Not Strawberry's `MaxTokensLimiter`: that one passes graphql-core's deprecated `max_tokens`
    (comments counted as tokens) with one count fixed when the schema is built, and leaves the
    error without a code; this limit is the serving process's setting, read per operation."""

    def on_operation(self) -> Iterator[None]:
        options = self.execution_context.parse_options
        limit = settings_of(self.execution_context.context).graphql_max_tokens
        options["max_lexical_tokens"] = limit  # type: ignore[typeddict-unknown-key]
        options["max_comments"] = MAX_COMMENTS  # type: ignore[typeddict-unknown-key]
        yield
        result = self.execution_context.result
        errors = getattr(result, "errors", None) or []
        for error in errors:
            if isinstance(error, GraphQLError) and "Document contains more than" in error.message:
                error.extensions = {**(error.extensions or {}), "code": TOO_LARGE}


# The fields that are the page a paged field asked for, by a field their type has beside
# them: a connection's `edges` and `nodes` (beside `pageInfo`), search's `hits` (beside
# `hasNextPage`).
PAGE_FIELDS = {"pageInfo": ("edges", "nodes"), "hasNextPage": ("hits",)}


def _page_size(field: FieldNode, definition: GraphQLField) -> int | None:
    """The page size a paged field asks for; None for a field without pages."""
    for name in PAGE_ARGUMENTS:
        if name not in definition.args:
            continue
        for argument in field.arguments or ():
            if argument.name.value == name:
                if isinstance(argument.value, IntValueNode):
                    return max(1, int(argument.value.value))
                if isinstance(argument.value, VariableNode):
                    return MAX_PAGE
        default = definition.args[name].default_value
        return int(default) if isinstance(default, int) else MAX_PAGE
    return None


def _multiplier(parent: GraphQLObjectType | GraphQLInterfaceType, field: FieldNode,
                definition: GraphQLField) -> int:
    """How many times a field's selection may be loaded, per object of its parent."""
    size = _page_size(field, definition)
    if size is not None:
        return size
    if any(beside in parent.fields and field.name.value in page
           for beside, page in PAGE_FIELDS.items()):
        return 1  # a page, already counted by the field that asked for it
    many = isinstance(get_nullable_type(definition.type), GraphQLList)
    return UNPAGED_LIST if many else 1


class _Cost(ValidationRule):
    max_cost = 500_000

    def enter_operation_definition(self, node: OperationDefinitionNode, *_: Any) -> None:
        schema = self.context.schema
        root = schema.get_root_type(node.operation)
        if root is None:
            return
        fragments = {
            definition.name.value: definition
            for definition in self.context.document.definitions
            if isinstance(definition, FragmentDefinitionNode)
        }
        cost = self._selection_cost(node.selection_set, root, fragments, frozenset())
        if cost > self.max_cost:
            self.report_error(
                GraphQLError(
                    f"The query may load about {cost} objects, more than the limit of "
                    f"{self.max_cost}: ask for smaller pages or fewer nested lists.",
                    node,
                    extensions={"code": TOO_COSTLY, "cost": cost, "limit": self.max_cost},
                )
            )

    def _selection_cost(
        self,
        selection_set: SelectionSetNode | None,
        parent: GraphQLNamedType,
        fragments: dict[str, FragmentDefinitionNode],
        seen: frozenset[str],
    ) -> int:
        if selection_set is None or not isinstance(
            parent, GraphQLObjectType | GraphQLInterfaceType
        ):
            return 0
        total = 0
        for selection in selection_set.selections:
            if isinstance(selection, FieldNode):
                definition = parent.fields.get(selection.name.value)
                if definition is None:  # __typename, or a field validation reports
                    total += 1
                    continue
                inner = self._selection_cost(
                    selection.selection_set, get_named_type(definition.type), fragments, seen
                )
                total += 1 + _multiplier(parent, selection, definition) * inner
            elif isinstance(selection, InlineFragmentNode):
                condition = selection.type_condition
                target = (
                    self.context.schema.get_type(condition.name.value) if condition else parent
                )
                if target is not None:
                    total += self._selection_cost(selection.selection_set, target, fragments, seen)
            elif isinstance(selection, FragmentSpreadNode):
                name = selection.name.value
                fragment = fragments.get(name)
                if fragment is None or name in seen:  # cycles are validation's to report
                    continue
                target = self.context.schema.get_type(fragment.type_condition.name.value)
                if target is not None:
                    total += self._selection_cost(
                        fragment.selection_set, target, fragments, seen | {name}
                    )
            if total > self.max_cost * 1000:  # enough to refuse; stop counting
                return total
        return total


class CostLimit(SchemaExtension):
    """Refuse an operation whose estimated cost is over `graphql_max_cost` (`QUERY_TOO_COSTLY`)."""

    def on_operation(self) -> Iterator[None]:
        limit = settings_of(self.execution_context.context).graphql_max_cost
        context = self.execution_context
        context.validation_rules = (*context.validation_rules, _cost_rule(limit))
        yield


@cache
def _cost_rule(limit: int) -> type[_Cost]:
    """One rule class per limit, so that a document's validation is cached (`ValidationCache`
    keys on the rules)."""
    return type("Cost", (_Cost,), {"max_cost": limit})


class DepthLimit(AddValidationRules):
    """At most MAX_DEPTH levels of nested fields, its rule made once (so validation is cached)."""

    rule = create_depth_validator(MAX_DEPTH, None, None)

    def __init__(self) -> None:
        super().__init__([self.rule])


class AliasLimit(AddValidationRules):
    """At most MAX_ALIASES aliases in a document, its rule made once (like DepthLimit's)."""

    rule = create_alias_validator(MAX_ALIASES)

    def __init__(self) -> None:
        super().__init__([self.rule])
