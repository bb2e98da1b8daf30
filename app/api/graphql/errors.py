"""Error masking: service errors keep their message and code, all others are hidden."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from graphql import GraphQLError
from strawberry.extensions import MaskErrors

from app.errors import ServiceError


class ServiceErrors(MaskErrors):
    """Expected errors keep their message and carry `extensions.code`; all others are masked."""

    def __init__(self) -> None:
        super().__init__(should_mask_error=self._unexpected, error_message="Unexpected error.")

    @staticmethod
    def _unexpected(error: GraphQLError) -> bool:
        # GraphQL's own errors (a variable that does not coerce, an unknown enum name) are the
        # client's to read; only exceptions from our code are masked.
        original = error.original_error
        return original is not None and not isinstance(original, ServiceError | GraphQLError)

    def _process_errors(self, errors: list[GraphQLError]) -> list[GraphQLError]:
        return list(self._with_codes(super()._process_errors(errors)))

    @staticmethod
    def _with_codes(errors: Iterable[GraphQLError]) -> Iterator[GraphQLError]:
        for error in errors:
            original = error.original_error
            if isinstance(original, ServiceError):
                extensions: dict[str, Any] = {"code": original.code, "_tag": original.tag}
                field = getattr(original, "field", None)
                if field is not None:
                    extensions["field"] = field
                error = GraphQLError(
                    original.message,
                    nodes=error.nodes,
                    source=error.source,
                    positions=error.positions,
                    path=error.path,
                    original_error=None,
                    extensions=extensions,
                )
            yield error
