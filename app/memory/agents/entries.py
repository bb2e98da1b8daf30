"""Agent memory's rules of who sees what (A1, A3, A5, A6, A9), as pure functions over the values
of `app.domain.agents`."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from app.domain.agents import (
    SHARED,
    AgentChange,
    AgentEntry,
    Source,
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


def may_reach(person: str | None, source: Source) -> bool:
    """A3, A9: whether a reader acting as `person` may reach a source's session: a person their
    own sessions only, `None` (a service token) every session of the org."""
    return person is None or source.person == person


def reachable(person: str | None, sources: Iterable[Source]) -> tuple[Source, ...]:
    """The sources a reader may reach; the others are left out, on every path."""
    return tuple(s for s in sources if may_reach(person, s))


def as_seen(person: str | None, entry: AgentEntry) -> AgentEntry:
    """An entry as a reader sees it: only the sources they may reach."""
    sources = reachable(person, entry.sources)
    return entry if sources == entry.sources else replace(entry, sources=sources)


def change_as_seen(person: str | None, change: AgentChange) -> AgentChange:
    """A recorded change as a reader sees it: only the sources they may reach."""
    sources = reachable(person, change.sources)
    return change if sources == change.sources else replace(change, sources=sources)


def view_of(who: Principal, entries: Iterable[AgentEntry]) -> dict[str, AgentEntry]:
    """The entries `who` may see, by the name each is listed under (a private entry as
    `key@person`, beside the shared one of its key), newest first, each with the sources `who`
    may reach."""
    visible = [as_seen(who.person, e) for e in entries if may_see(who.person, e.owner)]
    ordered = sorted(visible, key=lambda e: (-e.updated_at, e.name))
    return {e.name: e for e in ordered}


def target_of(
    entries: Iterable[AgentEntry], person: str | None, key: str, about: str | None
) -> AgentEntry | None:
    """The entry a Forget of `key` means for a caller acting as `person`: with `about`, that
    person's private entry of the key (if the caller may see it); without, the shared one."""
    owner = SHARED if about is None else about
    if not may_see(person, owner):
        return None
    return next((e for e in entries if e.key == key and e.owner == owner), None)
