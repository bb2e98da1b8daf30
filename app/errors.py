"""The service's errors, one tree. Each maps to one HTTP status and one `_tag`.

    ServiceError
    ├── SessionConflict   409  SESSION_CONFLICT   expected head/revision/version is stale, ...
    ├── AgentConflict     409  AGENT_CONFLICT     the agent memory's expected version is stale, ...
    ├── NotFound          404  NOT_FOUND          no such object in the caller's org
    ├── Unauthorized      401  UNAUTHORIZED       no token, or a token we do not know
    ├── Forbidden         403  FORBIDDEN          known caller, not allowed
    ├── ValidationError   400  VALIDATION_ERROR   a bad request body; `field` names the culprit
    ├── PayloadTooLarge   413  PAYLOAD_TOO_LARGE  the body is over the size limit (not read)
    └── Unavailable       503  UNAVAILABLE        the database does not answer; retry later
    SetupError                                    the service cannot start (missing Java, ports)
"""

from __future__ import annotations

# The `_tag` of an HTTP refusal made before the service's own code ran (no such route, a method
# the route does not take, a body that cannot be read): any other status is an `HTTPError`.
HTTP_TAGS = {400: "ValidationError", 404: "NotFound", 405: "MethodNotAllowed"}


def http_tag(status: int) -> str:
    """The `_tag` of an HTTP refusal with `status`."""
    return HTTP_TAGS.get(status, "HTTPError")


class ServiceError(Exception):
    """An error a client can act on: it carries its `_tag`, HTTP status and GraphQL code."""

    tag = "ServiceError"
    status = 500
    code = "INTERNAL"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def body(self) -> dict[str, object]:
        return {"_tag": self.tag, "message": self.message}


class SessionConflict(ServiceError):
    tag, status, code = "SessionConflict", 409, "SESSION_CONFLICT"


class AgentConflict(ServiceError):
    tag, status, code = "AgentConflict", 409, "AGENT_CONFLICT"


class NotFound(ServiceError):
    tag, status, code = "NotFound", 404, "NOT_FOUND"


class Unauthorized(ServiceError):
    tag, status, code = "Unauthorized", 401, "UNAUTHORIZED"


class Forbidden(ServiceError):
    tag, status, code = "Forbidden", 403, "FORBIDDEN"


class ValidationError(ServiceError):
    tag, status, code = "ValidationError", 400, "VALIDATION_ERROR"

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field

    def body(self) -> dict[str, object]:
        return {**super().body(), "field": self.field}


class PayloadTooLarge(ServiceError):
    tag, status, code = "PayloadTooLarge", 413, "PAYLOAD_TOO_LARGE"


class Unavailable(ServiceError):
    """The database does not answer now; `retry_after` seconds is a sane wait."""

    tag, status, code = "Unavailable", 503, "UNAVAILABLE"

    def __init__(self, message: str, retry_after: int = 5) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class SetupError(Exception):
    """The service cannot start; the message says what to do, in one line where possible."""
