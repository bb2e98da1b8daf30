"""Reads of sessions for the node types: views (with their sources' turns where a document
asks them), pages of sessions, versions and changes, and the instructions a turn would get."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from app.api.graphql.connections import Keyset, Page
from app.api.graphql.context import Context
from app.api.graphql.items.resolvers import item_fields
from app.api.graphql.selections import Asked, anywhere, asks, selected
from app.domain import history as history_values
from app.domain import items as timeline
from app.domain import sessions as values
from app.domain.history import Version
from app.memory.turns.instructions import Instructions

ENTRIES = Keyset("entries", (str,))
CHANGES = Keyset("changes", (str,))
VERSIONS = Keyset("versions", (int, int, str))
SESSIONS = Keyset("sessions", (int, str))

# Where a page of entries asks for its sources' turns, read them ahead in one batch.
SOURCE_TURNS = (("nodes", "sources", "turn"), ("edges", "node", "sources", "turn"))
# Where a document reaches the sources of the memory's entries: a page of them, or one by key.
SOURCES = (*(("entries", *path[:-1]) for path in SOURCE_TURNS), ("entry", "sources"))


async def view(
    ctx: Context, session_id: str, selections: Sequence[Asked]
) -> values.SessionView | None:
    """A session's view for a document asking `selections` of it.

    A document that asks for its sources' turns reads them with the view (one statement),
    and of the sources' items, only the properties it asks; unless it reads sessions inside
    too (a change's, an agent's), which then share the view read whole, so that this session
    costs one statement however often the document asks it."""
    memory = ("session", "memory")
    if any(asks(selections, (*memory, *path, "turn")) for path in SOURCES):
        names = set().union(*(selected(selections, (*memory, *path)) for path in SOURCES))
        inside = [selection for field in selections for selection in field.inside]
        whole = anywhere(inside, {"session", "sessions"})
        loader = ctx.sessions_with_turns(timeline.ITEM_FIELDS if whole else item_fields(names))
    else:
        loader = ctx.sessions
    return await loader.load(session_id)


async def views(ctx: Context, ids: Iterable[str]) -> list[values.SessionView]:
    """The views of the sessions `ids` names that the caller may reach, in that order."""
    return [view for view in await ctx.sessions.load_many(list(ids)) if view is not None]


async def session_ids(ctx: Context, agent: str | None, page: Page) -> list[str]:
    """A page of the ids of the sessions the caller may reach (one agent's, with `agent`)."""
    return await ctx.service.pages.session_ids(ctx.who, agent, page.after, page.first)


async def versions(ctx: Context, session_id: str, page: Page) -> list[Version]:
    return await ctx.page("versions", page.after, page.first).load(session_id)


async def changes(ctx: Context, change_id: str, page: Page) -> list[history_values.Change]:
    """A page of an entry's changes, newest first, from its latest change (`change_id`)."""
    return await ctx.page("changes", page.after_part(), page.first).load(change_id)


async def memory_at(ctx: Context, version: str) -> history_values.MemoryAt:
    """The memory as it was at a version."""
    return await ctx.memories.load(version)


async def instructions(ctx: Context, session_id: str) -> Instructions:
    return await ctx.service.turns.instructions(ctx.who, session_id)
