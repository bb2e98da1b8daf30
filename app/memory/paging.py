"""The bounds of paging. A page's size: DEFAULT_PAGE where a client names none, at most MAX_PAGE
(REST's `?limit=`, GraphQL's `first`). A position a client names (REST's `?offset=`, the
position a search cursor holds, the version an agent log starts after): statements add a page
size to it (`SKIP $offset LIMIT $limit`, `offset + 1`), so it is at most MAX_OFFSET, and no sum
of it and a page size overflows Neo4j's 64-bit integers."""

from __future__ import annotations

from app.errors import ValidationError

DEFAULT_PAGE = 50
MAX_PAGE = 200
MAX_OFFSET = 2**31 - 1


def check_offset(value: int, field: str) -> int:
    """`value` as a paging position: 0 to MAX_OFFSET, else a ValidationError on `field`."""
    if not 0 <= value <= MAX_OFFSET:
        raise ValidationError(f"{field} is between 0 and {MAX_OFFSET}", field)
    return value
