"""Read-your-writes across replicas: an answer that wrote carries the bookmark of its write in
the `OpenBot-Bookmark` header; a request that sends it back reads at least that state, on
whichever replica (and cluster member) it lands. Within one process the driver's bookmark
manager chains every transaction already (app/store/database.py)."""

from __future__ import annotations

import re

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.errors import ValidationError
from app.store.causality import Causality, causality

HEADER = "OpenBot-Bookmark"
MAX_BOOKMARKS = 8
# A bookmark as Neo4j 5 gives it: `FB:` and base64 (Neo4j answers a value without its prefix
# with an internal error, not as a bookmark it does not know).
BOOKMARK = re.compile(r"FB:[A-Za-z0-9+/=_-]{1,509}")


def bookmarks_of(scope: Scope) -> tuple[str, ...]:
    """The bookmarks a request sent back (a comma-separated list, over one or more header
    lines); a malformed one is a ValidationError on the header."""
    name = HEADER.lower().encode()
    raw = [value for key, value in scope.get("headers", []) if key == name]
    if not raw:
        return ()
    try:
        text = ",".join(value.decode("ascii") for value in raw)
    except UnicodeDecodeError as exc:
        raise ValidationError(f"{HEADER} is a bookmark an answer gave", HEADER) from exc
    values = [part.strip() for part in text.split(",")]
    if len(values) > MAX_BOOKMARKS or not all(BOOKMARK.fullmatch(v) for v in values):
        raise ValidationError(f"{HEADER} is a bookmark an answer gave", HEADER)
    return tuple(values)


class Bookmarks:
    """Each HTTP request's `Causality`: the bookmarks it sent back, which each of its
    transactions reads at least, and, once it wrote, its write's bookmark on the answer."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        causal = Causality(given=bookmarks_of(scope), field=HEADER)
        token = causality.set(causal)

        async def send_with_bookmark(message: Message) -> None:
            if message["type"] == "http.response.start" and causal.made:
                MutableHeaders(scope=message).append(HEADER, ",".join(causal.made))
            await send(message)

        try:
            await self.app(scope, receive, send_with_bookmark)
        finally:
            causality.reset(token)
