"""The root `search` field."""

from __future__ import annotations

import strawberry

from app.api.graphql.context import GraphInfo
from app.api.graphql.enums import EntryStatus, Kind
from app.api.graphql.search.types import SearchHit, SearchResults
from app.errors import ValidationError
from app.memory.views.search import DEFAULT_LIMIT, offset_after


@strawberry.type
class SearchQuery:
    @strawberry.field(
        description="Full-text search (Lucene syntax) over the session and agent entries the "
        "caller may read, best first: an exact key match, then by score, then the newest. "
        "`sessionId` keeps that session's entries; `agentId` that agent's memory and its "
        "sessions' entries; `kinds` and `status` the entries' own fields."
    )
    async def search(
        self,
        info: GraphInfo,
        query: str,
        session_id: strawberry.ID | None = None,
        agent_id: strawberry.ID | None = None,
        kinds: list[Kind] | None = None,
        status: EntryStatus | None = None,
        first: int = DEFAULT_LIMIT,
        after: str | None = None,
    ) -> SearchResults:
        ctx = info.context
        offset = offset_after(after)
        try:
            found = await ctx.service.search.search(
                ctx.who,
                query,
                session=None if session_id is None else str(session_id),
                agent=None if agent_id is None else str(agent_id),
                kinds=None if kinds is None else [kind.value for kind in kinds],
                status=None if status is None else status.value,
                offset=offset,
                limit=first,
            )
        except ValidationError as exc:
            if exc.field != "limit":
                raise
            raise ValidationError(exc.message, "first") from exc  # GraphQL's name for it
        hits = [SearchHit.from_domain(hit, offset + n) for n, hit in enumerate(found.hits)]
        return SearchResults(
            hits=hits,
            end_cursor=hits[-1].cursor if hits else None,
            has_next_page=found.more,
        )
