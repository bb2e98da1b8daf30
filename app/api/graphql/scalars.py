"""The `EpochMillis` scalar and the page bounds every list field shares."""

from __future__ import annotations

from typing import NewType

import strawberry

from app.errors import ValidationError

EpochMillis = NewType("EpochMillis", int)
EPOCH_MILLIS = strawberry.scalar(
    name="EpochMillis",
    serialize=int,
    parse_value=int,
    description="Milliseconds since the Unix epoch (beyond GraphQL's 32-bit Int).",
)

MAX_PAGE = 200


def page(offset: int, limit: int) -> tuple[int, int]:
    if offset < 0:
        raise ValidationError("offset is not negative", "offset")
    if not 1 <= limit <= MAX_PAGE:
        raise ValidationError(f"limit is between 1 and {MAX_PAGE}", "limit")
    return offset, limit
