"""Agent memory's rules of who sees what (A1, A5, A6, A9), as pure functions over the values of
`app.domain.agents`."""

from __future__ import annotations

from collections.abc import Iterable

from app.domain.agents import (
    SHARED,
    AgentEntry,
)
from app.domain.enums import Visibility
from app.domain.principals import Principal


def owner_of(visibility: str, about: str | None) -> str:
    """The owner part of an entry's identity: the person a private entry is about."""
    if visibility == Visibility.PRIVATE:
        assert about is not None
        return about
    return SHARED


def may_see(person: str | None, owner: str) -> bool:
    """A9: a person sees shared entries and their own private ones; `None` (a service token,
    or the service itself) sees all."""
    return person is None or owner in (SHARED, person)


def view_key(who: Principal, entry: AgentEntry) -> str:
    """The key an entry is listed under for `who`. A person sees at most one entry per key
    (their private one over a shared one); a service token sees every member's private
    entries, so those are listed as `key@person`."""
    if who.person is None and entry.owner != SHARED:
        return f"{entry.key}@{entry.owner}"
    return entry.key


def view_of(who: Principal, entries: Iterable[AgentEntry]) -> dict[str, AgentEntry]:
    """The entries `who` may see, by the key each is listed under, newest first."""
    visible = [e for e in entries if may_see(who.person, e.owner)]
    # A private entry comes after the shared one of its key, so it wins for its owner.
    ordered = sorted(visible, key=lambda e: e.owner != SHARED)
    keyed = {view_key(who, e): e for e in ordered}
    return dict(sorted(keyed.items(), key=lambda kv: (-kv[1].updated_at, kv[0])))


def target_of(
    entries: Iterable[AgentEntry], person: str | None, key: str, about: str | None
) -> AgentEntry | None:
    """The entry a Forget of `key` means for a caller acting as `person`: their own private
    entry of that key (or, with `about`, that person's), else the shared one."""
    candidates = {e.owner: e for e in entries if e.key == key}
    if about is not None:
        return candidates.get(about) if may_see(person, about) else None
    if person is not None and person in candidates:
        return candidates[person]
    return candidates.get(SHARED)
