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
  (the root field is level 0; an introspection field's selection is not counted), code
  `QUERY_TOO_DEEP`, and MAX_ALIASES aliases in the document and `__schema` once in an
  operation, code `QUERY_TOO_LARGE`. Introspection's fields cost as every other field does.

Each counts a fragment's fields where it is spread, and measures each fragment once
(`_Fragments`): a document of fragments that spread each other twice, level upon level, costs
the checks its own size, not the size it expands to. Strawberry's depth and alias validators
walk every spread again, which such a document makes exponential.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import suppress
from functools import cache
from typing import Any

from graphql import (
    DocumentNode,
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
    SchemaMetaFieldDef,
    SelectionSetNode,
    TypeMetaFieldDef,
    ValidationRule,
    VariableNode,
    get_named_type,
    get_nullable_type,
    parse,
)
from strawberry.extensions import (
    AddValidationRules,
    ParserCache,
    SchemaExtension,
    ValidationCache,
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
TOO_DEEP = "QUERY_TOO_DEEP"


# Distinct documents kept parsed (`ParsedOnce`) and validated (`ValidatedOnce`): clients
# send a few documents, again and again. A parsed document is many times its text, so only
# documents of up to CACHED_LENGTH characters are kept (GraphiQL's introspection query and
# the documented queries are well within it); a longer one is parsed and validated each time
# it comes.
DOCUMENTS_CACHED = 256
CACHED_LENGTH = 4096


class ParsedOnce(ParserCache):
    """Strawberry's `ParserCache` (each document parsed once, with TokenLimit's limits), except
    that a document that does not parse is left to Strawberry's own parse. `ParserCache` raises
    its error from the parsing hook, outside the guard that makes a parse error the operation's
    answer, so the operation's hooks (metrics, the `QUERY_TOO_LARGE` code) would not see it."""

    def __init__(self) -> None:
        super().__init__(maxsize=DOCUMENTS_CACHED)

    def on_parse(self) -> Iterator[None]:
        context = self.execution_context
        if (context.query is not None and context.graphql_document is None
                and len(context.query) <= CACHED_LENGTH):
            with suppress(GraphQLError):
                context.graphql_document = self.cached_parse_document(
                    context.query, **context.parse_options
                )
        yield


def parsed(query: str, max_tokens: int) -> DocumentNode:
    """`query` parsed with TokenLimit's limits, through ParsedOnce's cache when it is short
    enough to keep: the operation's own parse is then the same document, read once."""
    parse_document = ParsedOnce().cached_parse_document if len(query) <= CACHED_LENGTH else parse
    return parse_document(
        query, max_lexical_tokens=max_tokens, max_comments=MAX_COMMENTS
    )


class ValidatedOnce(ValidationCache):
    """Strawberry's `ValidationCache` for documents up to CACHED_LENGTH characters; a longer
    one is validated each time (by Strawberry's own validation)."""

    def __init__(self) -> None:
        super().__init__(maxsize=DOCUMENTS_CACHED)

    def on_validate(self) -> Iterator[None]:
        if len(self.execution_context.query or "") > CACHED_LENGTH:
            yield
            return
        yield from super().on_validate()


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
                    # (a literal past any page is refused by validation: Int is 32 bits)
                    digits = argument.value.value
                    return max(1, int(digits)) if len(digits) <= 10 else MAX_PAGE
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


INTROSPECTION: dict[str, GraphQLField] = {
    "__schema": SchemaMetaFieldDef, "__type": TypeMetaFieldDef,
}


def _field(
    parent: GraphQLObjectType | GraphQLInterfaceType, name: str
) -> GraphQLField | None:
    """The field `name` of `parent`, the introspection fields of a query's root among them
    (graphql-core keeps `__schema` and `__type` out of the root's fields): what introspection
    reads is counted as every other field is."""
    return INTROSPECTION.get(name) or parent.fields.get(name)


class _Fragments:
    """A document's fragments, each measured once (by one measure) however often it is spread.
    A fragment being measured counts nothing where it spreads itself (a cycle, which validation
    refuses), nor does one the document lacks (which validation refuses too)."""

    def __init__(self, document: DocumentNode) -> None:
        self.named = {d.name.value: d for d in document.definitions
                      if isinstance(d, FragmentDefinitionNode)}
        self._measured: dict[str, int] = {}

    def measured(self, name: str, measure: Callable[[FragmentDefinitionNode], int]) -> int:
        """`measure` of fragment `name`, once."""
        if name in self._measured:
            return self._measured[name]
        fragment = self.named.get(name)
        if fragment is None:
            return 0
        self._measured[name] = 0  # while it is measured
        self._measured[name] = found = measure(fragment)
        return found


class _Cost(ValidationRule):
    max_cost = 500_000

    def enter_operation_definition(self, node: OperationDefinitionNode, *_: Any) -> None:
        schema = self.context.schema
        root = schema.get_root_type(node.operation)
        if root is None:
            return
        cost = self._selection_cost(node.selection_set, root, _Fragments(self.context.document))
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
        parent: GraphQLNamedType | None,
        fragments: _Fragments,
    ) -> int:
        if selection_set is None or not isinstance(
            parent, GraphQLObjectType | GraphQLInterfaceType
        ):
            return 0
        total = 0
        for selection in selection_set.selections:
            if isinstance(selection, FieldNode):
                definition = _field(parent, selection.name.value)
                if definition is None:  # __typename, or a field validation reports
                    total += 1
                    continue
                inner = self._selection_cost(
                    selection.selection_set, get_named_type(definition.type), fragments
                )
                total += 1 + _multiplier(parent, selection, definition) * inner
            elif isinstance(selection, InlineFragmentNode):
                condition = selection.type_condition
                target = (
                    self.context.schema.get_type(condition.name.value) if condition else parent
                )
                total += self._selection_cost(selection.selection_set, target, fragments)
            elif isinstance(selection, FragmentSpreadNode):
                total += fragments.measured(selection.name.value, lambda f: (
                    self._selection_cost(f.selection_set, self.context.schema.get_type(
                        f.type_condition.name.value), fragments)
                ))
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


def _levels(selection_set: SelectionSetNode | None, fragments: _Fragments) -> int:
    """How many levels of nested fields lie below a selection set's own fields."""
    deepest = 0
    for selection in selection_set.selections if selection_set else ():
        if isinstance(selection, FieldNode):
            if selection.selection_set and not selection.name.value.startswith("__"):
                deepest = max(deepest, 1 + _levels(selection.selection_set, fragments))
        elif isinstance(selection, InlineFragmentNode):
            deepest = max(deepest, _levels(selection.selection_set, fragments))
        elif isinstance(selection, FragmentSpreadNode):
            deepest = max(deepest, fragments.measured(
                selection.name.value, lambda f: _levels(f.selection_set, fragments)
            ))
    return deepest


def _counted(
    selection_set: SelectionSetNode | None, fragments: _Fragments,
    counts: Callable[[FieldNode], bool],
) -> int:
    """The fields in a selection set that `counts`, a spread fragment's counted at each
    spread."""
    count = 0
    for selection in selection_set.selections if selection_set else ():
        if isinstance(selection, FieldNode):
            count += counts(selection) + _counted(selection.selection_set, fragments, counts)
        elif isinstance(selection, InlineFragmentNode):
            count += _counted(selection.selection_set, fragments, counts)
        elif isinstance(selection, FragmentSpreadNode):
            count += fragments.measured(
                selection.name.value, lambda f: _counted(f.selection_set, fragments, counts)
            )
    return count


def _in_operations(document: DocumentNode, counts: Callable[[FieldNode], bool]) -> int:
    """The fields of a document's operations that `counts`."""
    fragments = _Fragments(document)
    return sum(_counted(d.selection_set, fragments, counts) for d in document.definitions
               if isinstance(d, OperationDefinitionNode))


class _Depth(ValidationRule):
    def enter_operation_definition(self, node: OperationDefinitionNode, *_: Any) -> None:
        if _levels(node.selection_set, _Fragments(self.context.document)) > MAX_DEPTH:
            name = node.name.value if node.name else "anonymous"
            self.report_error(GraphQLError(
                f"'{name}' exceeds maximum operation depth of {MAX_DEPTH}", node,
                extensions={"code": TOO_DEEP, "limit": MAX_DEPTH},
            ))


class _Aliases(ValidationRule):
    def enter_document(self, node: DocumentNode, *_: Any) -> None:
        count = _in_operations(node, lambda field: field.alias is not None)
        if count > MAX_ALIASES:
            self.report_error(GraphQLError(
                f"{count} aliases found. Allowed: {MAX_ALIASES}",
                extensions={"code": TOO_LARGE, "limit": MAX_ALIASES},
            ))


class _OneSchema(ValidationRule):
    """An operation reads the whole schema once: it is what GraphiQL and code generators ask
    for, and each reading costs the CPU of thousands of fields, none waiting on the database."""

    def enter_operation_definition(self, node: OperationDefinitionNode, *_: Any) -> None:
        schemas = _counted(node.selection_set, _Fragments(self.context.document),
                           lambda field: field.name.value == "__schema")
        if schemas > 1:
            self.report_error(GraphQLError(
                f"__schema is asked for {schemas} times; an operation asks for it once", node,
                extensions={"code": TOO_LARGE, "limit": 1},
            ))


class DepthLimit(AddValidationRules):
    """At most MAX_DEPTH levels of nested fields below a root field (`QUERY_TOO_DEEP`)."""

    def __init__(self) -> None:
        super().__init__([_Depth])


class AliasLimit(AddValidationRules):
    """At most MAX_ALIASES aliases in a document, and `__schema` once in an operation
    (`QUERY_TOO_LARGE`)."""

    def __init__(self) -> None:
        super().__init__([_Aliases, _OneSchema])
