"""The root fields of sessions: one by id, and the sessions the caller may reach."""

from __future__ import annotations

import strawberry

from app.api.graphql.connections import Connection, page_of
from app.api.graphql.context import GraphInfo
from app.api.graphql.nodes import Session, sessions_connection
from app.api.graphql.selections import asked
from app.api.graphql.sessions import resolvers
from app.api.graphql.sessions.resolvers import SESSIONS
from app.memory.paging import DEFAULT_PAGE


@strawberry.type
class SessionQuery:
    @strawberry.field
    async def session(self, info: GraphInfo, id: strawberry.ID) -> Session | None:
        return Session.maybe(await resolvers.view(info.context, str(id), asked(info)))

    @strawberry.field(description="The sessions the caller may reach (one agent's, with "
                      "`agent`), oldest first.")
    async def sessions(
        self, info: GraphInfo, first: int = DEFAULT_PAGE, after: str | None = None,
        agent: str | None = None,
    ) -> Connection[Session]:
        page = page_of(SESSIONS, first, after, agent or "")
        ids = await resolvers.session_ids(info.context, agent, page)
        return await sessions_connection(info, page, ids)
