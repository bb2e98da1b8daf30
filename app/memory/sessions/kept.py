"""The session views a process keeps (issue 12): the last one it answered of each session, so
that a Configure at that view's revision, or a nested view of a session that did not move, is
answered without reading the view again. The graph is asked on every use whether the kept view
is still the session's (its head and revision), so a second process never gets a stale one."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.memory.values import SessionView


@dataclass(frozen=True)
class KeptView:
    """A view answered, the properties its sources' items were read with (`items`: all of
    ITEM_FIELDS, a GraphQL selection's, or none: the ids only), and, when it was read with them,
    the turns its sources cite (`Turns.find`'s answers by id). Turns are kept only when each is of
    the view's own session: every change to one of them moves that session's revision, where a
    fork's sources may cite its parent's turns, which change without moving the fork's."""

    items: tuple[str, ...]
    view: SessionView
    turns: Mapping[str, dict[str, Any]] | None = None

    def serves(self, items: tuple[str, ...]) -> bool:
        """Whether its items were read with every property in `items`."""
        return set(items) <= set(self.items)

    def at(self, head: str, revision: int) -> bool:
        return (self.view.session.head, self.view.session.revision) == (head, revision)

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
        """Keep `kept` as its session's view (in place of any before it); answers its view."""
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
