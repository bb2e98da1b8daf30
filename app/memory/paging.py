"""The one bound on every position a client names when paging: REST's `?offset=`, the
position a search cursor holds, and the version an agent log starts after. Statements add a
page size to a position (`SKIP $offset LIMIT $limit`, `offset + 1`), so a position is at most
MAX_OFFSET: no sum of it and a page size overflows Neo4j's 64-bit integers."""

from __future__ import annotations

from app.errors import ValidationError

MAX_OFFSET = 2**31 - 1


def check_offset(value: int, field: str) -> int:
    """`value` as a paging position: 0 to MAX_OFFSET, else a ValidationError on `field`."""
    if not 0 <= value <= MAX_OFFSET:
        raise ValidationError(f"{field} is between 0 and {MAX_OFFSET}", field)
    return value
