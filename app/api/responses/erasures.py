"""What REST answers of erasures: the record of a person's erasure, and a deleted session."""

from __future__ import annotations

from typing_extensions import TypedDict

from app.domain.erasures import Erasure


class ErasureCounts(TypedDict):
    """What an erasure made tombstones of."""

    sessions: int
    items: int
    entries: int
    agentEntries: int
    changes: int
    jobs: int


class ErasureRecord(TypedDict):
    """An erasure: its id, the person erased, when, and its counts (no personal content)."""

    id: str
    person: str
    at: int
    counts: ErasureCounts


class ErasureView(TypedDict):
    erasure: ErasureRecord


class Erasures(TypedDict):
    erasures: list[ErasureRecord]


class Deleted(TypedDict):
    """A deleted session: its id (the session is not found afterwards)."""

    deleted: str


def erasure_json(erasure: Erasure) -> ErasureRecord:
    c = erasure.counts
    return {
        "id": erasure.id, "person": erasure.person, "at": erasure.at,
        "counts": {"sessions": c.sessions, "items": c.items, "entries": c.entries,
                   "agentEntries": c.agent_entries, "changes": c.changes, "jobs": c.jobs},
    }
