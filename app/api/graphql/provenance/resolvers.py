"""Reads of provenance for the node types, one statement each per request."""

from __future__ import annotations

from app.api.graphql.context import Context
from app.domain import provenance


async def story(ctx: Context, change_id: str) -> list[provenance.StoryStep]:
    return await ctx.stories.load(change_id)


async def supports(ctx: Context, uid: str) -> provenance.Pair:
    return await ctx.supports.load(uid)


async def shown(ctx: Context, turn_id: str) -> provenance.Pair:
    return await ctx.shown.load(turn_id)
