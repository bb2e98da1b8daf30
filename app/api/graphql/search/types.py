"""A page of search hits, each reaching its entry's story and sources like any entry."""

from __future__ import annotations

import strawberry

from app.api.graphql.context import GraphInfo
from app.api.graphql.nodes import Agent, AgentEntry, Entry, Session
from app.memory.views.search import Hit, cursor_of


@strawberry.type
class SearchHit:
    """One hit: a session entry (`entry`, `session`) or an agent entry (`agentEntry`, `agent`)."""

    score: float = strawberry.field(description=(
        "BM25 over the entry's key and content, reckoned from the matches the caller may read "
        "alone; an exact key match ranks first"
    ))
    exact_key: bool = strawberry.field(description="the query is the entry's key")
    snippet: str = strawberry.field(description="the content around the match, **marked**")
    key: str = strawberry.field(description="the key the entry is listed under for the caller")
    cursor: str
    entry: Entry | None = strawberry.field(description="a session entry, as it stands now")
    agent_entry: AgentEntry | None = strawberry.field(description="an agent entry (A10)")
    session_id: strawberry.Private[str | None]
    agent_id: strawberry.Private[str]

    @classmethod
    def from_domain(cls, hit: Hit, offset: int) -> SearchHit:
        return cls(
            score=hit.score,
            exact_key=hit.exact,
            snippet=hit.snippet,
            key=hit.listed_as,
            cursor=cursor_of(offset),
            entry=None if hit.entry is None else Entry.from_domain(hit.entry),
            agent_entry=(
                None if hit.agent_entry is None else AgentEntry.from_domain(hit.agent_entry)
            ),
            session_id=hit.session,
            agent_id=hit.agent,
        )

    @strawberry.field(description="The session a session entry belongs to.")
    async def session(self, info: GraphInfo) -> Session | None:
        if self.session_id is None:
            return None
        return Session.maybe(await info.context.sessions.load(self.session_id))

    @strawberry.field(description="The agent of the entry (of its session, for a session entry).")
    async def agent(self, info: GraphInfo) -> Agent | None:
        return Agent.maybe(await info.context.agents.load(self.agent_id))


@strawberry.type
class SearchResults:
    """A page of hits, best first."""

    hits: list[SearchHit]
    end_cursor: str | None = strawberry.field(description="pass as `after` for the next page")
    has_next_page: bool
