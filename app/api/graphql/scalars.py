"""The `EpochMillis` scalar."""

from __future__ import annotations

from typing import NewType

import strawberry

EpochMillis = NewType("EpochMillis", int)
EPOCH_MILLIS = strawberry.scalar(
    name="EpochMillis",
    serialize=int,
    parse_value=int,
    description="Milliseconds since the Unix epoch (beyond GraphQL's 32-bit Int).",
)

