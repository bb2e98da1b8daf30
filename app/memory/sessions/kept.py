"""What this process keeps of its sessions between requests, and the one rule that makes it safe.

The rule: a kept thing is valid exactly while its session's revision (for a turn snapshot, its
agent's memory version too; for a view with turns, its agent's count of erasures too) has not
moved. Every change to what a session's view shows moves its revision (S12-S17, a filled-in
kept state too), but an erasure of an agent entry, which changes the turns shown it and moves
its agent's count of erasures; every change to an agent's memory moves its version. So nothing
kept is trusted as it stands: each use asks the graph, in the statement that uses it, whether
those marks are still the ones it was kept at, and reads afresh where they moved. A second
process on the same graph never gets a stale answer.

Two things are kept per session, the newest of each:

- its view (`KeptView`), the last one this process answered, so that a Configure at that view's
  revision, or a nested view of a session that did not move, is answered without reading the
  view again. The org's settings change without moving the revision: each use's statement
  brings them.
- its turn snapshot (`TurnState`): what the lock read as the last turn this process recorded
  left it, so that the next turn is decided before the lock and recorded in the statement that
  takes it, guarded by the revision and the agent's memory version. Anything else that differs
  (the org's settings) rolls that turn back, to be decided again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from app.domain.sessions import SessionMark, SessionView
from app.domain.turns import Turn, TurnState

# How many sessions' turn snapshots a process keeps, each one lock's reading: the session's
# state and its instructions' reach (up to `max_length` of text).
SNAPSHOTS = 1024


@dataclass(frozen=True)
class KeptView:
    """A view answered, the properties its sources' items were read with (`items`: all of
    ITEM_FIELDS, a GraphQL selection's, or none: the ids only), and, when it was read with them,
    the turns its sources cite (by id) and its agent's count of erasures then. Turns are kept
    only when each is of the view's own session: every change to one of them moves that
    session's revision (an erasure of an agent entry shown to it, its agent's count), where a
    fork's sources may cite its parent's turns, which change without moving the fork's."""

    items: tuple[str, ...]
    view: SessionView
    turns: Mapping[str, Turn] | None = None
    agent_erasures: int = 0  # its agent's count of erasures of entries when its turns were read

    def serves(self, items: tuple[str, ...]) -> bool:
        """Whether its items were read with every property in `items`."""
        return set(items) <= set(self.items)

    def at(self, head: str, revision: int) -> bool:
        return (self.view.session.head, self.view.session.revision) == (head, revision)

    def still(self, mark: SessionMark) -> bool:
        """Whether it is still the session's view where the session stands at `mark`."""
        return self.at(mark.head, mark.revision) and (
            self.turns is None or self.agent_erasures == mark.agent_erasures
        )

    @property
    def size(self) -> int:
        """What it counts against the budget: its entries and turns."""
        return len(self.view.memory.entries) + len(self.turns or ())


class KeptViews:
    """The kept views by session id, the newest last; the oldest go while they have more than
    `budget` entries and turns in all (`Settings.kept_view_entries`; a view larger than that is
    not kept at all)."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.views: dict[str, KeptView] = {}
        self.size = 0  # the entries and turns of the views kept

    def get(self, session_id: str) -> KeptView | None:
        return self.views.get(session_id)

    def keep(self, kept: KeptView) -> SessionView:
        """Keep `kept` as its session's view (in place of any before it); answers its view.
        A fork's sources may be its source session's items, which an erasure there changes
        without moving the fork's revision: a fork's view (or a child session's) is kept to
        serve its sources' ids only, never their items."""
        session = kept.view.session
        if kept.items and (session.forked_from is not None or session.parent is not None):
            kept = replace(kept, items=(), turns=None)
        before = self.views.pop(kept.view.session.id, None)
        self.size -= 0 if before is None else before.size
        if self.budget == 0:  # keeping none
            return kept.view
        self.views[kept.view.session.id] = kept
        self.size += kept.size
        while self.size > self.budget:
            oldest = self.views.pop(next(iter(self.views)))
            self.size -= oldest.size
        return kept.view


class Kept:
    """Everything this process keeps of its sessions (see the module's rule): their views, and
    their turn snapshots."""

    def __init__(self, view_entries: int, snapshots: int = SNAPSHOTS) -> None:
        self.views = KeptViews(view_entries)
        self.snapshots: dict[str, TurnState] = {}
        self.snapshot_budget = snapshots

    def view(self, session_id: str) -> KeptView | None:
        """The session's kept view, valid while the session is at its head and revision."""
        return self.views.get(session_id)

    def keep_view(self, kept: KeptView) -> SessionView:
        """Keep `kept` as its session's view; answers its view."""
        return self.views.keep(kept)

    def snapshot(self, session_id: str) -> TurnState | None:
        """The session's turn snapshot, valid while the session is at its revision and its
        agent's memory at its version."""
        return self.snapshots.get(session_id)

    def keep_snapshot(self, session_id: str, state: TurnState | None) -> None:
        """Keep `state` as the session's turn snapshot (None: keep none), the newest last."""
        self.snapshots.pop(session_id, None)
        if state is None:
            return
        self.snapshots[session_id] = state
        if len(self.snapshots) > self.snapshot_budget:
            del self.snapshots[next(iter(self.snapshots))]
