"""The session mutations: memory commands (S13-S16), fork and revert."""

from __future__ import annotations

import strawberry

from app.api.graphql.context import GraphInfo
from app.api.graphql.enums import Kind
from app.api.graphql.nodes import Session
from app.memory.changes import commands


async def _command(
    info: GraphInfo, session_id: str, expected: str, revision: int, command: commands.Command
) -> Session:
    ctx = info.context
    view = await ctx.service.sessions.command(ctx.who, session_id, expected, revision, command)
    return Session.from_domain(view)


@strawberry.type
class MemoryMutation:
    @strawberry.mutation(description="S13: add or replace an entry and make it active.")
    async def remember(
        self, info: GraphInfo, session_id: strawberry.ID, expected: str, revision: int,
        key: str, content: str, kind: Kind,
    ) -> Session:
        command = commands.Remember(key=key, content=content, kind=kind.value)
        return await _command(info, str(session_id), expected, revision, command)

    @strawberry.mutation(description="S14: mark an entry retracted.")
    async def forget(
        self, info: GraphInfo, session_id: strawberry.ID, expected: str, revision: int, key: str
    ) -> Session:
        command = commands.Forget(key=key)
        return await _command(info, str(session_id), expected, revision, command)

    @strawberry.mutation(
        description="S15: true/false set a switch, null removes the override, omitted keeps it."
    )
    async def configure(
        self, info: GraphInfo, session_id: strawberry.ID, expected: str, revision: int,
        use: bool | None = strawberry.UNSET, generate: bool | None = strawberry.UNSET,
    ) -> Session:
        command = commands.Configure(
            use=None if use is strawberry.UNSET else use,
            generate=None if generate is strawberry.UNSET else generate,
            set_use=use is not strawberry.UNSET,
            set_generate=generate is not strawberry.UNSET,
        )
        return await _command(info, str(session_id), expected, revision, command)

    @strawberry.mutation(description="S16: consolidate now with the session's model.")
    async def refresh(
        self, info: GraphInfo, session_id: strawberry.ID, expected: str, revision: int
    ) -> Session:
        return await _command(info, str(session_id), expected, revision, commands.Refresh())


@strawberry.type
class HistoryMutation:
    @strawberry.mutation(description="A new session with the history and memory of this one.")
    async def fork(
        self, info: GraphInfo, session_id: strawberry.ID, at: str | None = None
    ) -> Session:
        ctx = info.context
        return Session.from_domain(await ctx.service.history.fork(ctx.who, str(session_id), at))

    @strawberry.mutation(description="Make history and memory what they were at a version.")
    async def revert(
        self, info: GraphInfo, session_id: strawberry.ID, expected: str, revision: int, to: str
    ) -> Session:
        ctx = info.context
        view = await ctx.service.history.revert(ctx.who, str(session_id), expected, revision, to)
        return Session.from_domain(view)
