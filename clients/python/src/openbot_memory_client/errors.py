"""The service's errors as exceptions, one class per `_tag`, under one base.

    OpenBotMemoryError
    ├── SessionConflict    409  the head or revision sent is stale (read again, retry)
    ├── AgentConflict      409  the agent memory's version sent is stale
    ├── NotFound           404  no such object in the caller's reach
    ├── Unauthorized       401  no token, or one the service does not know
    ├── Forbidden          403  a known caller, not allowed
    ├── ValidationError    400  a bad request; `field` names the culprit
    ├── MethodNotAllowed   405  a GraphQL mutation sent with GET
    ├── PayloadTooLarge    413  the body is over the service's size limit
    ├── Unavailable        503  the database does not answer (after the client's retries);
    │                           `retry_after` is the seconds the service asked to wait
    ├── InternalError      500  the service failed; quote `request_id` when you report it
    ├── GraphQLError            any other error of a GraphQL answer (`code` is its extensions')
    ├── BadResponse             an answer below 400 the client cannot read (not JSON, or not
    │                           what the call reads): not the service's, or not this version's
    └── Unreachable             no answer: the connection failed or timed out (`status` None)

`status` is the HTTP status of the answer that carried the error: a GraphQL error's is that of
its answer (200). It is None where no HTTP answer came: `Unreachable`, and an error heard over
`watch`'s WebSocket.

An error whose `_tag` has no class here (`HTTPError`: a status the service's own code did not
answer) is raised as the class of its status, or where its status has none either, as an
`OpenBotMemoryError` whose `tag` is that `_tag`.
"""

from __future__ import annotations

import math
from typing import Any


def seconds(header: str | None) -> float | None:
    """The seconds a `Retry-After` header gives (not negative), or None without a number."""
    try:
        value = float(header) if header is not None else math.nan
    except ValueError:
        return None
    return max(value, 0.0) if math.isfinite(value) else None


class OpenBotMemoryError(Exception):
    """An error of a call to the service: its `_tag`, message, field, request id and HTTP
    status."""

    tag = "OpenBotMemoryError"
    code: str | None = None  # GraphQL's `extensions.code` for it

    def __init__(
        self,
        message: str,
        *,
        field: str | None = None,
        request_id: str | None = None,
        status: int | None = None,
        body: dict[str, Any] | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.request_id = request_id
        self.status = status
        self.body = body or {}
        self.retry_after = retry_after

    def __str__(self) -> str:
        where = f" (field {self.field})" if self.field else ""
        rid = f" [request {self.request_id}]" if self.request_id else ""
        return f"{self.tag}: {self.message}{where}{rid}"


class SessionConflict(OpenBotMemoryError):
    tag, code = "SessionConflict", "SESSION_CONFLICT"


class AgentConflict(OpenBotMemoryError):
    tag, code = "AgentConflict", "AGENT_CONFLICT"


class NotFound(OpenBotMemoryError):
    tag, code = "NotFound", "NOT_FOUND"


class Unauthorized(OpenBotMemoryError):
    tag, code = "Unauthorized", "UNAUTHORIZED"


class Forbidden(OpenBotMemoryError):
    tag, code = "Forbidden", "FORBIDDEN"


class ValidationError(OpenBotMemoryError):
    tag, code = "ValidationError", "VALIDATION_ERROR"


class MethodNotAllowed(OpenBotMemoryError):
    tag = "MethodNotAllowed"


class PayloadTooLarge(OpenBotMemoryError):
    tag, code = "PayloadTooLarge", "PAYLOAD_TOO_LARGE"


class Unavailable(OpenBotMemoryError):
    tag, code = "Unavailable", "UNAVAILABLE"


class InternalError(OpenBotMemoryError):
    tag, code = "InternalError", "INTERNAL"


class BadResponse(OpenBotMemoryError):
    """An answer below 400 the client cannot read: its body is not JSON (a proxy's page, say),
    or not what the call reads; its message quotes the start of the body, no more."""

    tag = "BadResponse"


class Unreachable(OpenBotMemoryError):
    """No answer from the service: the connection failed or timed out (raised from the
    transport's own exception)."""

    tag = "Unreachable"


class GraphQLError(OpenBotMemoryError):
    """A GraphQL error with no class of its own; `code` is its `extensions.code`."""

    tag = "GraphQLError"

    def __init__(self, message: str, *, code: str | None = None, **rest: Any) -> None:
        super().__init__(message, **rest)
        self.code = code


ERRORS: dict[str, type[OpenBotMemoryError]] = {
    cls.tag: cls
    for cls in (
        SessionConflict, AgentConflict, NotFound, Unauthorized, Forbidden, ValidationError,
        MethodNotAllowed, PayloadTooLarge, Unavailable, InternalError,
    )
}
BY_STATUS: dict[int, type[OpenBotMemoryError]] = {
    404: NotFound, 401: Unauthorized, 403: Forbidden, 400: ValidationError,
    405: MethodNotAllowed, 413: PayloadTooLarge, 503: Unavailable, 500: InternalError,
}
CODES: dict[str, type[OpenBotMemoryError]] = {
    cls.code: cls for cls in ERRORS.values() if cls.code is not None
}


def error_of(
    status: int, body: Any, request_id: str | None, retry_after: float | None = None
) -> OpenBotMemoryError:
    """The exception for an error answer: by its `_tag`, else by its status; `retry_after`
    is what its `Retry-After` header asked."""
    if not isinstance(body, dict):
        body = {"message": str(body)}
    tag = body.get("_tag")
    cls = ERRORS.get(tag) if isinstance(tag, str) else None
    cls = cls or BY_STATUS.get(status, OpenBotMemoryError)
    field = body.get("field")
    error = cls(
        str(body.get("message", f"HTTP {status}")),
        field=field if isinstance(field, str) else None,
        request_id=body.get("requestId") or request_id,
        status=status,
        body=body,
        retry_after=retry_after,
    )
    if cls is OpenBotMemoryError and isinstance(tag, str):
        error.tag = tag  # the service's own word for it
    return error


def graphql_error_of(error: dict[str, Any], request_id: str | None) -> OpenBotMemoryError:
    """The exception for the first error of a GraphQL answer, by its `extensions.code`."""
    extensions = error.get("extensions") or {}
    code = extensions.get("code")
    field = extensions.get("field")
    message = str(error.get("message", "GraphQL error"))
    rid = extensions.get("requestId") or request_id
    cls = CODES.get(code) if isinstance(code, str) else None
    if cls is None:
        return GraphQLError(
            message, code=code if isinstance(code, str) else None,
            field=field if isinstance(field, str) else None, request_id=rid, body=error,
        )
    return cls(message, field=field if isinstance(field, str) else None, request_id=rid,
               body=error)
