"""Reads of consolidation runs for the node types."""

from __future__ import annotations

from app.api.graphql.connections import Keyset, Page
from app.api.graphql.context import Context
from app.domain import history as history_values
from app.domain.jobs import Run

RUNS = Keyset("runs", (int, str))


async def runs(ctx: Context, session_id: str, page: Page) -> list[Run | None]:
    """A page of a session's consolidation runs, newest first."""
    ids = await ctx.page("runs", page.after, page.first).load(session_id)
    return await ctx.runs.load_many(ids)


async def kept(ctx: Context, change_ids: list[str]) -> list[history_values.Change]:
    """The changes a run kept, each as it was made (the head of its history)."""
    chains = await ctx.histories.load_many(change_ids)
    return [chain[0] for chain in chains if chain]
