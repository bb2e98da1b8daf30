"""Reads of a session's timeline: pages of items and turns, and turns read ahead for a list
of items."""

from __future__ import annotations

from app.api.graphql.connections import Keyset, Page
from app.api.graphql.context import Context
from app.domain import items as timeline
from app.domain.turns import Turn

ITEMS = Keyset("items", (int,))
TURNS = Keyset("turns", (int, str))


def item_fields(names: set[str]) -> tuple[str, ...]:
    """The item properties a selection of Item's fields (`names`) reads: its uid and id (what
    `turn` and `supports` look up by) and each property it asks (session_views' `$itemFields`)."""
    return tuple(f for f in timeline.ITEM_FIELDS if f in names or f in ("uid", "id"))


async def items(ctx: Context, version: str, page: Page) -> list[timeline.Item]:
    """A page of the timeline as it was at `version` (a head: the timeline now), keyed by seq."""
    return await ctx.page("items", page.after_part(), page.first).load(version)


async def turns(ctx: Context, session_id: str, page: Page) -> list[Turn | None]:
    """A page of the turns recorded in a session, oldest first."""
    ids = await ctx.page("turns", page.after, page.first).load(session_id)
    return await ctx.turns.load_many(ids)


async def turn_of(
    ctx: Context, uid: str, turn_id: str | None, known: bool
) -> Turn | None:
    """The turn an item came in (`turn_id` when `known`, else looked up by the item's uid)."""
    found = turn_id if known else await ctx.turn_ids.load(uid)
    return None if found is None else await ctx.turns.load(found)


async def turns_ahead(ctx: Context, ids: list[str]) -> dict[str, Turn | None] | None:
    """The turns `ids` name, for a list of items to answer `turn` without one await per item;
    None when the read fails (each item's own lookup then meets the error, on its nullable
    `turn`, so a failed read ahead costs those fields, not the whole page of entries).

    Turns this request read already come from the loader's cache; the others are read in one
    statement, not gathered from a loader future per item, and primed into the loader for any
    other field that asks the same turns."""
    cached = {i: ctx.turns.cache_map.get(i) for i in ids}
    missing = [i for i, read in cached.items() if read is None]
    try:
        found = await ctx.service.turns.find(ctx.who, missing) if missing else {}
        rows = {i: found.get(i) if read is None else await read for i, read in cached.items()}
    except Exception:
        return None
    ctx.turns.prime_many({i: found.get(i) for i in missing})
    return rows
