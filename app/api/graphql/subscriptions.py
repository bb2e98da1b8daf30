"""Live views: GraphQL subscriptions over `graphql-transport-ws` on `/graphql`.

Each subscription registers a watch with the process's hub (`app.memory.views.live`), which hears
this process's writes at once and other processes' at its next poll (`live_poll_seconds`), and
then reads what changed through the same loaders and principal scope as queries: a session or
agent the caller may not reach is NotFound, exactly as a query's would be. Each operation the
socket carries has a context of its own, which checks the socket's token and gets fresh loaders
before each event (`Context.next_event`): a revoked token ends what the socket hears, and
nested fields read the graph anew.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

import strawberry

from app.api.graphql.context import Context, GraphInfo
from app.api.graphql.nodes import AgentMemory, Run, Session
from app.domain import jobs
from app.errors import NotFound
from app.memory.ids import now_ms


async def reachable(ctx: Context, session_id: str) -> int:
    """The session's revision, read as a query reads it (from the process's kept view while
    that is current); NotFound where the caller may not reach it (any more)."""
    found = await ctx.service.sessions.views(ctx.who, [session_id])
    if session_id not in found:
        raise NotFound(f"no session {session_id}")
    return found[session_id].session.revision


def ended_runs(runs: list[jobs.Run], told: set[str]) -> list[jobs.Run]:
    """The runs that ended and were not told yet, in the order they ended."""
    new = [run for run in runs if run.ended and run.id not in told]
    return sorted(new, key=lambda run: (run.finished_at or 0, run.id))


@strawberry.type
class Subscription:
    @strawberry.subscription(
        description="The session's view now, then its new view after every change of its "
        "memory or state (a person's edit, consolidation, a turn, revert, configure): one view "
        "per revision, in revision order. A view of a revision already passed when it is sent "
        "shows that revision's head and memory, and today's settings."
    )
    async def memory_changed(
        self, info: GraphInfo, session_id: strawberry.ID
    ) -> AsyncGenerator[Session, None]:
        ctx, sid = info.context, str(session_id)
        async with ctx.service.live.watch("session", sid) as watch:
            told = await ctx.service.sessions.view(ctx.who, sid)
            await ctx.next_event()
            yield Session.from_domain(told)
            while True:
                marks = await watch.changed()
                # (views come a bounded number at a time: read on until they reach the marks)
                while marks.revision > told.session.revision:
                    views = await ctx.service.live.session_views(
                        ctx.who, sid, told.session.revision, told.session.head
                    )
                    if not views:
                        break
                    for view in views:
                        await ctx.next_event()
                        yield Session.from_domain(view)
                    told = views[-1]

    @strawberry.subscription(
        description="Each consolidation run of the session when it ends: succeeded, failed "
        "or skipped."
    )
    async def run_finished(
        self, info: GraphInfo, session_id: strawberry.ID
    ) -> AsyncGenerator[Run, None]:
        ctx, sid = info.context, str(session_id)
        consolidation = ctx.service.consolidation
        since = now_ms()  # runs that end from now on are told, however slow the reads below
        async with ctx.service.live.watch("session", sid) as watch:
            revision = await reachable(ctx, sid)  # NotFound as a query would be
            told = {run.id for run in await consolidation.runs(ctx.who, sid)
                    if run.ended and (run.finished_at or 0) < since}
            ended: tuple[int, int] | None = None
            while True:
                marks = await watch.changed()
                if marks.revision != revision:
                    # the session moved: it may be gone (deleted, erased), which ends the
                    # stream as a query would be answered
                    await ctx.still_signed_in()
                    await reachable(ctx, sid)
                    revision = marks.revision
                if (marks.ended, marks.last_ended) == ended:
                    continue
                ended = marks.ended, marks.last_ended
                for run in ended_runs(await consolidation.runs(ctx.who, sid), told):
                    told.add(run.id)
                    await ctx.next_event()
                    found = Run.maybe(run)
                    assert found is not None
                    yield found

    @strawberry.subscription(
        description="The agent's memory as the caller may see it now, then after each new "
        "version that changed an entry the caller may see (A9: a version that touched only "
        "another member's private entries is not sent). Versions that land together are sent "
        "as one view: agent memory keeps no past states (A7)."
    )
    async def agent_memory_changed(
        self, info: GraphInfo, agent_id: strawberry.ID
    ) -> AsyncGenerator[AgentMemory, None]:
        ctx, aid = info.context, str(agent_id)
        async with ctx.service.live.watch("agent", aid) as watch:
            shown = await ctx.service.agent_memory.view(ctx.who, aid)
            await ctx.next_event()
            yield AgentMemory.from_domain(aid, shown)
            told = shown.version
            while True:
                marks = await watch.changed()
                if marks.version <= told:
                    continue
                told, news = await ctx.service.live.agent_news(ctx.who, aid, shown)
                if news is not None:
                    await ctx.next_event()
                    shown = news
                    yield AgentMemory.from_domain(aid, news)
