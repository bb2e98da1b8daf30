"""Full-text search over the entries a caller may read: session entries as they stand
at each session's head, and agent entries as the caller's view shows them (A9), best first.

Neo4j's full-text (Lucene) index finds the matches; the service ranks them: an exact key match
first, then by a score reckoned from the matches the caller may read alone (`relevance`), then
the newest. Lucene's own score weighs a word by how many documents of the whole index hold it,
every org's and every person's, so a caller comparing the scores of their own entries would
learn how often others wrote a word. The snippet is the entry's content around the first
matched word, each matched word marked `**like this**`. Paging is by offset, handed to GraphQL
as an opaque cursor.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from app.domain.agents import AgentEntry
from app.domain.enums import Status
from app.domain.principals import Principal
from app.domain.search import Match
from app.domain.sessions import KINDS, Entry
from app.errors import NotFound, ValidationError
from app.memory.agents.entries import as_seen
from app.memory.paging import check_offset
from app.store.agents import AgentRepository
from app.store.database import Database, Tx
from app.store.search import SearchRepository
from app.store.sessions import SessionRepository

MAX_QUERY = 500
MAX_LIMIT = 100
DEFAULT_LIMIT = 20
STATUSES: tuple[Status, ...] = tuple(Status)
BM25_K1 = 1.2  # how fast more mentions of a term stop adding to a score
BM25_B = 0.75  # how much a longer field weighs each mention less
SNIPPET_WIDTH = 160
SNIPPET_LEAD = 40
MARK = "**"

LUCENE_WORDS = frozenset({"AND", "OR", "NOT", "TO"})
WORD = re.compile(r"\w+")
ESCAPED = re.compile(r"\\(.)", re.DOTALL)  # a character Lucene reads as itself
QUERY_WORD = re.compile(r"(\w+)(\*?)(?!\w*:)")  # a field name (`key:`) is no term


@dataclass(frozen=True)
class Term:
    """One word of a query: matched whole, or as a prefix (`budg*`)."""

    text: str
    prefix: bool

    def matches(self, word: str) -> bool:
        word = word.lower()
        return word.startswith(self.text) if self.prefix else word == self.text


def check_query(query: str, field: str = "query") -> str:
    """The query, stripped; an empty or overlong one is a ValidationError on `field`."""
    query = query.strip()
    if not query:
        raise ValidationError("the search query is empty", field)
    if len(query) > MAX_QUERY:
        raise ValidationError(f"the search query is at most {MAX_QUERY} characters", field)
    return query


def terms_of(query: str) -> list[Term]:
    """The words of a Lucene query, without its operators and field names, lowercased."""
    return [
        Term(word.lower(), bool(star))
        for word, star in QUERY_WORD.findall(query)
        if word not in LUCENE_WORDS
    ]


def key_named(query: str) -> str:
    """The key a query names, when it is one: the query as Lucene reads one term or phrase of
    it, its quotes and escapes taken off (`travel\\/budget` or `"window seat"` name the keys
    `travel/budget` and `window seat`)."""
    if len(query) >= 2 and query[0] == query[-1] == '"':
        query = query[1:-1]
    return ESCAPED.sub(r"\1", query)


def snippet(text: str, terms: Sequence[Term], width: int = SNIPPET_WIDTH) -> str:
    """`text` around its first word that a term matches, at most `width` characters of it,
    with every matched word marked. Cut ends show an ellipsis; with no match, the start."""
    words = list(WORD.finditer(text))
    hits = [m for m in words if any(t.matches(m.group()) for t in terms)]
    start = 0
    if hits and len(text) > width:
        start = max(0, min(hits[0].start() - SNIPPET_LEAD, len(text) - width))
        # Start on a word, not inside one.
        while 0 < start < len(text) and text[start - 1].isalnum():
            start -= 1
    end = min(len(text), start + width)
    while end < len(text) and text[end - 1].isalnum() and text[end].isalnum() and end > start:
        end -= 1
    if end == start:
        end = min(len(text), start + width)
    out: list[str] = []
    cursor = start
    for m in hits:
        if m.start() < start or m.end() > end:
            continue
        out += [text[cursor : m.start()], MARK, m.group(), MARK]
        cursor = m.end()
    out.append(text[cursor:end])
    body = "".join(out).strip()
    return ("…" if start > 0 else "") + body + ("…" if end < len(text) else "")


def relevance(matches: Sequence[Match], terms: Sequence[Term]) -> list[float]:
    """Each match's score: BM25 (with Lucene's constants) over its key and its content, summed,
    with the statistics of `matches` alone (how many of them hold a term, how long a field is
    on average), which are the entries the caller may read. The terms are the query's words
    and prefixes (`terms_of`), whatever Lucene operator is on them."""
    scores = [0.0] * len(matches)
    unique = list(dict.fromkeys(terms))
    if not unique or not matches:
        return scores
    made = [match.made for match in matches]
    for texts in ([m.key for m in made], [m.content or "" for m in made]):
        fields = [WORD.findall(text.lower()) for text in texts]
        lengths = [len(words) for words in fields]
        average = max(sum(lengths) / len(lengths), 1.0)
        for term in unique:
            if term.prefix:
                counts = [sum(1 for w in words if w.startswith(term.text)) for words in fields]
            else:
                counts = [words.count(term.text) for words in fields]
            holding = len(counts) - counts.count(0)
            if not holding:
                continue
            idf = math.log(1 + (len(matches) - holding + 0.5) / (holding + 0.5))
            for n, count in enumerate(counts):
                if count:
                    norm = BM25_K1 * (1 - BM25_B + BM25_B * lengths[n] / average)
                    scores[n] += idf * count * (BM25_K1 + 1) / (count + norm)
    return [round(score, 6) for score in scores]


def ranked(matches: Sequence[Match], terms: Sequence[Term]) -> list[tuple[float, Match]]:
    """The matches best first: an exact key, then by `relevance`, then the newest; the change,
    session and agent make the order total (a fork reverted to its source's version holds its
    source's change), so paging by offset neither repeats nor skips a hit."""
    scores = relevance(matches, terms)
    order = sorted(
        range(len(matches)),
        key=lambda n: (not matches[n].exact, -scores[n], -matches[n].made.updated_at,
                       matches[n].made.change, matches[n].session or "", matches[n].agent),
    )
    return [(scores[n], matches[n]) for n in order]


def cursor_of(offset: int) -> str:
    """An opaque GraphQL cursor for the hit at `offset`."""
    return base64.urlsafe_b64encode(f"hit:{offset}".encode()).decode()


def offset_after(cursor: str | None, field: str = "after") -> int:
    """The offset of the hit after `cursor` (0 without one)."""
    if cursor is None:
        return 0
    try:
        text = base64.urlsafe_b64decode(cursor.encode()).decode()
        tag, number = text.split(":")
        offset = int(number)
    except (ValueError, binascii.Error, UnicodeDecodeError) as exc:
        raise ValidationError("after is a cursor from a previous page", field) from exc
    if tag != "hit" or offset < 0:
        raise ValidationError("after is a cursor from a previous page", field)
    return check_offset(offset + 1, field)


@dataclass(frozen=True)
class Hit:
    """One ranked hit: a session entry (with its session) or an agent entry (with its agent)."""

    score: float
    exact: bool
    snippet: str
    agent: str
    session: str | None = None
    entry: Entry | None = None
    agent_entry: AgentEntry | None = None
    listed_as: str = ""  # the key the caller's agent view lists the entry under


@dataclass(frozen=True)
class SearchPage:
    """A page of hits, best first, from `offset`; `more` when another page follows."""

    hits: tuple[Hit, ...]
    offset: int
    more: bool


def hit_of(who: Principal, score: float, match: Match, terms: Sequence[Term]) -> Hit:
    """A match as a hit: its score, its snippet, the key the caller's view lists it under, and
    (for an agent entry) the sources the caller may reach."""
    if match.entry is not None:
        return Hit(
            score, match.exact, snippet(match.entry.content or "", terms), match.agent,
            session=match.session, entry=match.entry, listed_as=match.entry.key,
        )
    assert match.agent_entry is not None
    entry = as_seen(who.person, match.agent_entry)
    return Hit(
        score, match.exact, snippet(entry.content or "", terms), match.agent,
        agent_entry=entry, listed_as=entry.name,
    )


@dataclass
class Search:
    """Searching what a caller may read."""

    db: Database

    async def search(
        self,
        who: Principal,
        query: str,
        *,
        session: str | None = None,
        agent: str | None = None,
        kinds: Sequence[str] | None = None,
        status: str | None = None,
        offset: int = 0,
        limit: int = DEFAULT_LIMIT,
    ) -> SearchPage:
        """Hits for `query` (Lucene syntax), best first. `session` keeps that session's entries,
        `agent` that agent's memory and its sessions' entries; an unknown (or unreachable) one
        is NotFound, and an empty one (an empty `status` too) is no filter. `kinds` and `status`
        filter the entries' own fields."""
        query = check_query(query)
        session, agent, status = session or None, agent or None, status or None
        if not 1 <= limit <= MAX_LIMIT:
            raise ValidationError(f"a page holds 1 to {MAX_LIMIT} hits", "limit")
        check_offset(offset, "offset")
        if kinds is not None and not set(kinds) <= set(KINDS):
            raise ValidationError(f"kinds are some of {', '.join(KINDS)}", "kinds")
        if status is not None and status not in STATUSES:
            raise ValidationError(f"status is one of {', '.join(STATUSES)}", "status")
        terms = terms_of(query)

        async def work(tx: Tx) -> SearchPage:
            sessions = SessionRepository(tx)
            if session is not None:
                await sessions.view(who, session)
            if agent is not None and agent not in await AgentRepository(tx).find(who.org, [agent]):
                raise NotFound(f"no agent {agent}")
            search = SearchRepository(tx)
            found = ranked(
                await search.matches(
                    who, query, key=key_named(query), session=session, agent=agent,
                    kinds=kinds, status=status,
                ),
                terms,
            )
            page = found[offset : offset + limit]
            shown = await search.with_sources([match for _, match in page])
            hits = tuple(
                hit_of(who, score, match, terms)
                for (score, _), match in zip(page, shown, strict=True)
            )
            return SearchPage(hits, offset, len(found) > offset + limit)

        return await self.db.read(work)
