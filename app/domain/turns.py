"""Turns: one model step of a session, as recorded and as answered (SPEC section 5)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from app.domain.agents import AgentEntry
from app.domain.enums import TurnStatus, turn_status_of
from app.domain.items import BranchItem
from app.domain.made import made
from app.domain.sessions import Entry, SessionState

# A turn as session_views answers it (a list: see its header), by position.
TURN_ROW = ("id", "status", "model", "shown", "shownAgent", "at", "completedAt", "head",
            "revision", "session")


@dataclass(frozen=True)
class Turn:
    """A recorded turn: its status, model, items (their ids, where read), what it was shown,
    and the session at the revision and head it made. `types` and `apps` are its items' types
    and Apps, read where a completing step needs them (S8 over the whole turn)."""

    id: str
    status: TurnStatus
    model: str | None
    shown: tuple[str, ...]
    shown_agent: tuple[str, ...]
    at: int
    completed_at: int | None
    session: str
    head: str
    revision: int
    items: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    apps: tuple[str, ...] = ()

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> Turn:
        """A turn as session_views answers it (a list, in `TURN_ROW`'s order)."""
        id_, status, model, shown, shown_agent, at, completed_at, head, revision, session = row
        return made(cls, {"id": id_, "status": turn_status_of(status), "model": model,
                          "shown": tuple(shown or ()), "shown_agent": tuple(shown_agent or ()),
                          "at": at, "completed_at": completed_at, "session": session,
                          "head": head, "revision": revision, "items": (), "types": (),
                          "apps": ()})


@dataclass(frozen=True, slots=True)
class TurnItem:
    """An item as a client sends it; `id` is the client's own choice, or None."""

    type: str
    role: str
    content: str
    id: str | None = None
    app: str | None = None


@dataclass(frozen=True, slots=True)
class Reachable:
    """What the instructions of a turn of a session can reach, as `instruction_entries` reads
    it: the switches in force, the session's newest active entries, and its agent's newest
    active entries that the session's person (`viewer`) may see (A9), as many of each as the
    budget could hold."""

    org: str
    viewer: str
    use: bool
    shared_agent: bool
    session: tuple[Entry, ...]
    agent: tuple[AgentEntry, ...]
    # The keys (an agent entry's names) of the entries tied in time with the last one read that
    # were not read (a cut inside a tie), on each side.
    session_tied: tuple[str, ...] = ()
    agent_tied: tuple[str, ...] = ()

    @property
    def closed(self) -> bool:
        """Whether each side read every entry that comes before its cut in Python's order
        (newest first, then by key): Neo4j cut a tie in its own order of the keys, which an
        entry not read may precede in Python's. Then the whole tie must be read."""
        return _closed(self.session, self.session_tied) and _closed(self.agent, self.agent_tied)


def _closed(read: Sequence[Entry | AgentEntry], tied: Sequence[str]) -> bool:
    """Whether the entries read (in Neo4j's order) hold every one of their tie that comes
    first in Python's order: each tied key not read comes after each key read of its tie."""
    if not tied:
        return True
    last = read[-1].updated_at
    return max(_name(e) for e in read if e.updated_at == last) < min(tied)


def _name(entry: Entry | AgentEntry) -> str:
    """The name an entry is ordered and shown by: an agent entry's listed key."""
    return entry.name if isinstance(entry, AgentEntry) else entry.key


@dataclass(frozen=True, slots=True)
class TurnState:
    """What a turn of a session is decided from, read under the session's lock: the session's
    state, what its instructions can reach, and its agent's memory version. `whole` says
    whether the reach was read between two commits (neither the session's revision nor the
    agent's memory version moved while it was read)."""

    session: SessionState
    reach: Reachable
    agent_version: int
    whole: bool = True

    def after(self, done: Recorded) -> TurnState:
        """This state as the lock reads it once the turn that left `done` committed: the
        session at its new revision and head, with its new items; a new head, which no other
        version continues yet."""
        session = replace(self.session, revision=done.revision, head=done.head,
                          depth=done.depth, items=done.items, head_shared=False)
        return replace(self, session=session, whole=True)


@dataclass(frozen=True, slots=True)
class TurnInput:
    """What a turn is decided from under its session's lock: the lock's state, and whether its
    reach is the lock row's own (not read again); the turn's items already on the branch (by
    the ids the client chose) with the one turn they all came in, if one; or else the turn a
    completing step continues and whether its items are on the session's branch, and the id
    each item takes where its client chose none (the branch's next, but those the branch or
    the turn's client ids hold already)."""

    state: TurnState
    own: bool
    existing: tuple[BranchItem, ...] = ()
    first: Turn | None = None
    earlier: Turn | None = None
    earlier_on_branch: bool = False
    generated: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Recorded:
    """What a recorded turn left: its id, and the session's revision, head, depth and items
    after it."""

    turn: str
    revision: int
    head: str
    depth: int
    items: int


@dataclass(frozen=True, slots=True)
class NewItem:
    """An item of a turn about to be recorded."""

    uid: str
    id: str
    type: str
    role: str
    content: str
    app: str | None
    author: str | None


@dataclass(frozen=True, slots=True)
class NewTurn:
    """A turn decided and about to be recorded (or a completing step of one): its items, what
    it was shown (the keys, and the change each stands for), and whether it teaches."""

    id: str
    learn: bool
    client_item_ids: bool
    status: TurnStatus
    model: str | None
    at: int
    head: str
    shown: tuple[str, ...]
    saw: tuple[str, ...]
    shown_agent: tuple[str, ...]
    saw_agent: tuple[str, ...]
    items: tuple[NewItem, ...]

    def recorded(self, session: str, revision: int) -> Turn:
        """The turn as recorded in one step at `revision` of `session` (no read back)."""
        return Turn(
            id=self.id,
            status=self.status,
            model=self.model,
            shown=self.shown,
            shown_agent=self.shown_agent,
            at=self.at,
            completed_at=self.at if self.status == TurnStatus.COMPLETED else None,
            session=session,
            head=self.head,
            revision=revision,
            items=tuple(item.id for item in self.items),
        )


@dataclass(frozen=True, slots=True)
class NewRun:
    """The consolidation run a completed turn queues (S7)."""

    id: str
    model: str | None
    at: int
