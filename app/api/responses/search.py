"""What REST answers of a search: its hits, session entries and agent entries."""

from __future__ import annotations

from typing_extensions import TypedDict

from app.api.responses.agents import AgentEntry, agent_entry_json
from app.api.responses.sessions import Entry, entry_json
from app.memory.views import search


class SessionHitEntry(Entry):
    session: str | None


class AgentHitEntry(AgentEntry):
    agent: str


class Hit(TypedDict):
    """One search hit: a session entry (with its session) or an agent entry (with its agent),
    the key the caller's view lists it under (`key@person` for a private agent entry, as the
    agent memory's `entries` map), its score and a snippet with the matched words marked."""

    entry: SessionHitEntry | AgentHitEntry
    listedAs: str
    score: float
    snippet: str


def hit_json(hit: search.Hit) -> Hit:
    entry: SessionHitEntry | AgentHitEntry
    if hit.entry is not None:
        entry = {**entry_json(hit.entry), "session": hit.session}
    else:
        assert hit.agent_entry is not None
        entry = {**agent_entry_json(hit.agent_entry), "agent": hit.agent}
    return {"entry": entry, "listedAs": hit.listed_as, "score": hit.score, "snippet": hit.snippet}


class Hits(TypedDict):
    """A page of hits, and whether more follow it."""

    hits: list[Hit]
    more: bool


def search_json(page: search.SearchPage) -> Hits:
    return {"hits": [hit_json(hit) for hit in page.hits], "more": page.more}
