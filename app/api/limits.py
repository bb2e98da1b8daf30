"""Request limits enforced before a handler sees the request: the size of the body."""

from __future__ import annotations

from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.encoding import dumps
from app.api.telemetry import ERROR_KEY
from app.errors import PayloadTooLarge


def _declared_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


class BodyLimit:
    """A body over `max_bytes` is 413 `PayloadTooLarge`: at once when its Content-Length says
    so (nothing is read), else as soon as the bytes streamed in (chunked) pass the limit."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    def error(self) -> PayloadTooLarge:
        return PayloadTooLarge(f"the body is over the limit of {self.max_bytes} bytes")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _declared_length(scope)
        if declared is not None and declared > self.max_bytes:
            await self._refuse(scope, send)
            return
        seen = 0
        started = False

        async def counting_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise self.error()
            return message

        async def watching_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, counting_receive, watching_send)
        except PayloadTooLarge:
            # A reader outside Starlette's exception handlers, were there one, let it through.
            if started:
                raise
            await self._refuse(scope, send)

    async def _refuse(self, scope: Scope, send: Send) -> None:
        error = self.error()
        scope[ERROR_KEY] = error.tag
        body = dumps(error.body())
        await send(
            {
                "type": "http.response.start",
                "status": error.status,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


class WholeBody:
    """`app` gets the request's body whole, as one message read before it starts. For an app
    that answers a failed read of the body itself (the MCP SDK: a 500): a chunked body over
    `BodyLimit` is refused in this read instead, before `app` starts, and the service's
    handlers answer it with the 413 `PayloadTooLarge` REST answers."""

    def __init__(
        self, app: ASGIApp, refuse: Callable[[bytes], ASGIApp | None] = lambda body: None
    ) -> None:
        self.app = app
        self.refuse = refuse  # the answer to a body `app` must not get, or None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        message = await receive()
        while message["type"] == "http.request":
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                message = {"type": "http.request", "body": b"".join(chunks), "more_body": False}
                refused = self.refuse(message["body"])
                if refused is not None:
                    await refused(scope, receive, send)
                    return
                break
            message = await receive()
        # the body, or the disconnect that cut it short; then the client's later messages
        first: Message | None = message

        async def replay() -> Message:
            nonlocal first
            if first is None:
                return await receive()
            given, first = first, None
            return given

        await self.app(scope, replay, send)
