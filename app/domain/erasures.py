"""Erasures: the record each erasure of a person's data leaves, with no personal content."""

from __future__ import annotations

import re
from dataclasses import dataclass

# What an erasure names in the place of what it erased: `erased-` and a random id (a person's
# opaque id, 32 hex digits; an entry's opaque key, a UUID). Such a name is the erasure's, never
# a client's: a Remember of one would write into what the erasure left.
ERASED_PREFIX = "erased-"
_ERASURES_NAME = re.compile(
    "erased-(?:[0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"
)


def erasures_own(name: str) -> bool:
    """Whether `name` is one an erasure gives."""
    return _ERASURES_NAME.fullmatch(name) is not None


@dataclass(frozen=True, slots=True)
class ErasureCounts:
    """What an erasure made tombstones of."""

    sessions: int = 0
    items: int = 0
    entries: int = 0
    agent_entries: int = 0
    changes: int = 0
    jobs: int = 0


@dataclass(frozen=True, slots=True)
class Erasure:
    """One erasure: its id, the person it erased (as asked), when, who asked, its status
    (`running` until every part is done), what it erased, and the opaque id that stands for the
    person wherever their id was stored."""

    id: str
    person: str
    at: int
    by: str | None = None
    status: str = "done"
    replacement: str | None = None
    sessions: int = 0
    items: int = 0
    entries: int = 0
    agent_entries: int = 0
    changes: int = 0
    jobs: int = 0

    @property
    def counts(self) -> ErasureCounts:
        return ErasureCounts(self.sessions, self.items, self.entries, self.agent_entries,
                             self.changes, self.jobs)
