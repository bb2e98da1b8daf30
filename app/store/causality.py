"""A request's bookmarks across replicas: what its client sent back, and what its last write
made, carried to every driver session the request opens."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass

import neo4j

# The error codes Neo4j answers when a bookmark it never gave is sent.
INVALID_BOOKMARK = frozenset({
    "Neo.ClientError.Transaction.InvalidBookmark",
    "Neo.ClientError.Transaction.InvalidBookmarkMixture",
})


@dataclass
class Causality:
    """The bookmarks of one request, across replicas: those its client sent back (`given`, the
    state each of its transactions reads at least), and those of the last write it made
    (`made`, for its answer). `field` names where the client sent them, for a 400 on one the
    database never gave. Within one process the driver's bookmark manager chains every
    session: a replica reads its own writes without them."""

    given: tuple[str, ...] = ()
    field: str = "bookmark"
    made: tuple[str, ...] = ()

    def bookmarks(self) -> neo4j.Bookmarks | None:
        values = (*self.given, *self.made)
        return neo4j.Bookmarks.from_raw_values(values) if values else None


causality: ContextVar[Causality | None] = ContextVar("causality", default=None)
