"""Error masking: service errors keep their message and code, all others are hidden."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from typing import Any

from graphql import GraphQLError
from strawberry.extensions import MaskErrors

from app.errors import ServiceError
from app.logs import FIELDS, request_id

log = logging.getLogger("openbot_memory.graphql")


def unexpected(error: GraphQLError) -> bool:
    """Whether an error is our code's exception while a field resolved. GraphQL's own errors
    (a document that does not validate, a variable or literal that does not coerce, also when
    the scalar's parser raised) have no path, and are the client's to read."""
    original = error.original_error
    return (original is not None and error.path is not None
            and not isinstance(original, ServiceError | GraphQLError))


def log_errors(errors: Iterable[GraphQLError]) -> None:
    """Expected errors (a service error, or a document that does not parse or validate) as one
    line without a traceback; any other with its traceback. Never the message of a service
    error, which may quote what the client sent: its tag and path only."""
    rid = request_id.get()
    for error in errors:
        original = error.original_error
        path = ".".join(str(part) for part in error.path or ())
        if not unexpected(error):
            tag = original.tag if isinstance(original, ServiceError) else "RequestError"
            log.info("graphql %s at %s", tag, path or "-",
                     extra={FIELDS: {"requestId": rid, "error": tag, "path": path or None}})
        else:
            log.error("unexpected error in graphql at %s", path or "-", exc_info=original,
                      extra={FIELDS: {"requestId": rid, "error": type(original).__name__,
                                      "path": path or None}})


class ServiceErrors(MaskErrors):
    """Expected errors keep their message and carry `extensions.code`; all others are masked."""

    def __init__(self) -> None:
        super().__init__(should_mask_error=unexpected, error_message="Unexpected error.")

    def anonymise_error(self, error: GraphQLError) -> GraphQLError:
        """The masked error, with the request id its traceback was logged under."""
        masked = super().anonymise_error(error)
        masked.extensions = {"requestId": request_id.get()}
        return masked

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
