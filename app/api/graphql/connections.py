"""Relay connections: the page shape of every GraphQL list that grows with history, and its
opaque keyset cursors.

A cursor is the sort key of the last node a page showed, as base64url of a small versioned
JSON (`{"v": 1, "l": "items", "p": "ses-1", "k": [12]}`: the list, the parent whose list it is,
the key), never a position: the next page is the nodes whose key comes after it, so a write
landing between two pages neither repeats nor skips a node. A cursor is refused by another
list, and by the same list of another parent. The
statements behind each list take `$after` (the key, or null) and `$first` and read at most
`$first + 1` nodes; the one more says whether there is a next page.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import strawberry

from app.api.bodies import INT64_MAX, INT64_MIN, broken_text
from app.errors import ValidationError
from app.memory.paging import MAX_PAGE

CURSOR_VERSION = 1

N = TypeVar("N")
T = TypeVar("T")
Key = tuple[Any, ...]


@dataclass(frozen=True)
class Keyset:
    """One list's sort key: its name (a cursor of one list is refused by another), the types
    of the key's parts, and the bounds of an integer part in a cursor the list gives."""

    name: str
    parts: tuple[type, ...]
    least: int = INT64_MIN
    most: int = INT64_MAX

    def cursor(self, key: Key, parent: str = "") -> str:
        named = {"v": CURSOR_VERSION, "l": self.name, **({"p": parent} if parent else {}),
                 "k": list(key)}
        raw = json.dumps(named, separators=(",", ":"))
        return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")

    def key(self, cursor: str | None, parent: str = "") -> Key | None:
        """The key a cursor names (None for no cursor); a ValidationError on `after` for one
        this list, of this parent, did not give."""
        if cursor is None:
            return None
        try:
            raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
            decoded = json.loads(raw)
        except (binascii.Error, ValueError, RecursionError) as exc:
            raise ValidationError("after is not a cursor this list gave", "after") from exc
        if not (
            isinstance(decoded, dict)
            and decoded.get("v") == CURSOR_VERSION
            and decoded.get("l") == self.name
            and decoded.get("p", "") == parent
            and isinstance(decoded.get("k"), list)
            and len(decoded["k"]) == len(self.parts)
            and all(_is(value, part) for value, part in zip(decoded["k"], self.parts, strict=True))
            and all(self.least <= value <= self.most
                    for value in decoded["k"] if isinstance(value, int))
        ):
            raise ValidationError(f"after is not a cursor of {self.name}", "after")
        return tuple(decoded["k"])


def _is(value: Any, part: type) -> bool:
    """Whether a key's part has its type; an integer one fits Neo4j's 64 bits, a string one is
    text storage can keep."""
    if part is int:
        return isinstance(value, int) and not isinstance(value, bool) and (
            INT64_MIN <= value <= INT64_MAX)
    if part is str:
        return isinstance(value, str) and broken_text(value) is None
    return isinstance(value, part)


@dataclass(frozen=True)
class Page:
    """What a connection field was asked: how many, after which key."""

    first: int
    after: Key | None
    parent: str = ""  # whose list it is, named in its cursors

    def after_part(self, n: int = 0) -> Any:
        """One part of the `after` key (None on the first page), for a statement's `$after`."""
        return None if self.after is None else self.after[n]


def page_of(keyset: Keyset, first: int, after: str | None, parent: str = "") -> Page:
    """Check a connection field's arguments: `first` between 0 and MAX_PAGE, `after` a cursor
    of this list of `parent` (the session, version or agent whose list it is; none for a list
    of the org's)."""
    if not 0 <= first <= MAX_PAGE:
        raise ValidationError(f"first is between 0 and {MAX_PAGE}", "first")
    return Page(first, keyset.key(after, parent), parent)


@strawberry.type
class PageInfo:
    has_next_page: bool
    has_previous_page: bool = strawberry.field(description="whether `after` was given")
    start_cursor: str | None
    end_cursor: str | None = strawberry.field(description="pass as `after` for the next page")


@strawberry.type
class Edge(Generic[N]):
    keyset: strawberry.Private[Keyset]
    key: strawberry.Private[Key]
    parent: strawberry.Private[str]

    @strawberry.field
    def cursor(self) -> str:  # encoded when asked: most pages are read for their nodes only
        return self.keyset.cursor(self.key, self.parent)

    node: N


@strawberry.type
class Connection(Generic[N]):
    """A page of a list, in Relay's shape; `nodes` is the edges' nodes without cursors."""

    edges: list[Edge[N]]
    nodes: list[N]
    page_info: PageInfo
    total_count: int | None = strawberry.field(
        description="the length of the whole list where it is known without a scan (entries); "
        "null otherwise"
    )


def connection(
    keyset: Keyset,
    page: Page,
    rows: Sequence[T],
    key: Callable[[T], Key],
    node: Callable[[T], N],
    total: int | None = None,
) -> Connection[N]:
    """The connection of a page from at most `first + 1` rows read after the page's key."""
    edges = [Edge(node=node(row), keyset=keyset, key=key(row), parent=page.parent)
             for row in rows[: page.first]]
    return Connection(
        edges=edges,
        nodes=[edge.node for edge in edges],
        page_info=PageInfo(
            has_next_page=len(rows) > page.first,
            has_previous_page=page.after is not None,
            start_cursor=keyset.cursor(edges[0].key, page.parent) if edges else None,
            end_cursor=keyset.cursor(edges[-1].key, page.parent) if edges else None,
        ),
        total_count=total,
    )


def keyed_page(entries: Mapping[str, T], page: Page) -> list[tuple[str, T]]:
    """Entries already read whole (a memory view), by key: those after the page's key, at most
    `first + 1`. The one kind of list paged in Python: a memory view is read whole."""
    after = page.after_part()
    ordered = sorted(
        (item for item in entries.items() if after is None or item[0] > after),
        key=lambda item: item[0],
    )
    return ordered[: page.first + 1]
