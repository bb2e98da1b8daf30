"""The per-request context: the service, the caller, and the DataLoaders of each level."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.websockets import WebSocket
from strawberry.dataloader import DataLoader
from strawberry.types import Info

from app.config import Settings
from app.domain import history as history_values
from app.domain import items as timeline
from app.domain import jobs, provenance
from app.domain import sessions as values
from app.domain.agents import Agent, AgentChange, AgentMemory
from app.domain.principals import Principal
from app.domain.turns import Turn
from app.errors import ValidationError
from app.memory.service import Service

# One keyset read of a growing list: the parents' ids, the key to start after, how many.
PageFetch = Callable[[list[str], Any, int], Awaitable[Mapping[str, list[Any] | None]]]

# The memory of a version not found (none the caller may reach).
NO_MEMORY = history_values.MemoryAt(entries=(), processed=(), processed_seq=0)


@dataclass
class Context:
    """Per request: the service, the caller, and the loaders that batch each nesting level."""

    service: Service
    who: Principal
    request: Request | WebSocket
    response: Response | WebSocket
    # A WebSocket's `connection_init` payload (Strawberry sets it): where its token is.
    connection_params: dict[str, object] | None = None
    # What signed a WebSocket in (its `Authorization`), checked again before each operation
    # it carries and each event (`still_signed_in`).
    authorization: str | None = None

    def renew(self, who: Principal | None = None, authorization: str | None = None) -> None:
        """Fresh loaders (for `who`, signed in with `authorization`, when given): a
        WebSocket's one context signs in after it was made, and each event of a subscription
        reads the graph anew, not from a cache."""
        if who is not None:
            self.who, self.authorization = who, authorization
        self.__post_init__()

    def fresh(self) -> Context:
        """The same caller with loaders of its own: for one operation of a WebSocket."""
        return dataclasses.replace(self)

    async def still_signed_in(self) -> None:
        """A WebSocket's token still signs it in: a revoked one (an erased person's) is
        Unauthorized, as a request with it is. (Nothing to check for an HTTP request, whose
        token was checked as it came.)"""
        if self.authorization is not None:
            await self.service.tokens.principal(self.authorization)

    async def next_event(self) -> None:
        """Before each event of a subscription: the socket's token still signs it in, and
        fresh loaders."""
        await self.still_signed_in()
        self.renew()

    def __post_init__(self) -> None:
        sessions, who = self.service.sessions, self.who

        async def load_sessions(ids: list[str]) -> list[values.SessionView | None]:
            found = await sessions.views(who, ids)
            return [found.get(i) for i in ids]


        async def load_agents(ids: list[str]) -> list[Agent | None]:
            found = await self.service.agents.find(who, ids)
            return [found.get(i) for i in ids]

        async def load_histories(ids: list[str]) -> list[list[history_values.Change]]:
            found = await sessions.histories(who, ids)
            return [found.get(i, []) for i in ids]

        service = self.service

        async def load_turn_ids(uids: list[str]) -> list[str | None]:
            found = await service.turns.turns_of_items(uids)
            return [found.get(uid) for uid in uids]

        async def load_turns(ids: list[str]) -> list[Turn | None]:
            found = await service.turns.find(who, ids)
            return [found.get(i) for i in ids]

        async def load_turn_items(ids: list[str]) -> list[list[timeline.Item]]:
            found = await service.turns.items(who, ids)
            return [found.get(i, []) for i in ids]

        async def load_runs(ids: list[str]) -> list[jobs.Run | None]:
            found = await service.consolidation.find(who, ids)
            return [found.get(i) for i in ids]

        async def load_memories(versions: list[str]) -> list[history_values.MemoryAt]:
            found = await service.history.memories(who, versions)
            return [found.get(v, NO_MEMORY) for v in versions]

        async def load_items(uids: list[str]) -> list[timeline.Item | None]:
            found = await sessions.items_by_uid(who, uids)
            return [found.get(uid) for uid in uids]

        async def load_agent_memories(ids: list[str]) -> list[AgentMemory | None]:
            found = await service.agent_memory.views(who, ids)
            return [found.get(i) for i in ids]

        async def load_agent_histories(ids: list[str]) -> list[list[AgentChange]]:
            found = await service.agent_memory.histories(who, ids)
            return [found.get(i, []) for i in ids]

        async def load_jobs(ids: list[str]) -> list[jobs.LearningJob | None]:
            found = await service.learning.find(who, ids)
            return [found.get(i) for i in ids]

        async def load_stories(ids: list[str]) -> list[list[provenance.StoryStep]]:
            found = await service.provenance.stories(who, ids)
            return [found.get(i, []) for i in ids]

        async def load_supports(uids: list[str]) -> list[provenance.Pair]:
            found = await service.provenance.supports(who, uids)
            return [found.get(uid, ([], [])) for uid in uids]

        async def load_shown(ids: list[str]) -> list[provenance.Pair]:
            found = await service.provenance.shown(who, ids)
            return [found.get(i, ([], [])) for i in ids]

        self.sessions = DataLoader(load_fn=load_sessions)
        self._with_turns: dict[tuple[str, ...], DataLoader[str, values.SessionView | None]] = {}
        self.stories = DataLoader(load_fn=load_stories)
        self.supports = DataLoader(load_fn=load_supports)
        self.shown = DataLoader(load_fn=load_shown)
        self.jobs = DataLoader(load_fn=load_jobs)
        self.item = DataLoader(load_fn=load_items)
        self.agent_memories = DataLoader(load_fn=load_agent_memories)
        self.agent_histories = DataLoader(load_fn=load_agent_histories)
        self.agents = DataLoader(load_fn=load_agents)
        self.histories = DataLoader(load_fn=load_histories)
        self.turn_ids = DataLoader(load_fn=load_turn_ids)
        self.turns = DataLoader(load_fn=load_turns)
        self.turn_items = DataLoader(load_fn=load_turn_items)
        # The GraphQL turns read ahead for lists of items, by id (`nodes.read_turns_ahead`):
        # an item answers its `turn` from here without an await of its own.
        self.turns_read: dict[str, Any] = {}
        self.runs = DataLoader(load_fn=load_runs)
        self.memories = DataLoader(load_fn=load_memories)
        self._pages: dict[tuple[str, Hashable, int], DataLoader[str, list[Any]]] = {}
        pages = service.pages
        self._fetches: dict[str, PageFetch] = {
            "items": lambda ids, after, first: pages.items(who, ids, after, first),
            "versions": lambda ids, after, first: pages.versions(who, ids, after, first),
            "runs": lambda ids, after, first: pages.run_ids(who, ids, after, first),
            "turns": lambda ids, after, first: pages.turn_ids(who, ids, after, first),
            "changes": lambda ids, after, first: pages.changes(who, ids, after, first),
            "agent_changes": lambda ids, after, first: pages.agent_changes(who, ids, after, first),
            "agent_sessions": lambda ids, after, first: pages.agent_session_ids(
                who, ids, after, first
            ),
            "jobs": lambda ids, after, first: pages.job_ids(who, ids, after, first),
        }

    def release(self) -> None:
        """Let go of what the request read, once it is answered. The loaders refer back to the
        context that holds them, a cycle that only the collector's passes over older
        generations would free, with every view the request read: emptied, they go when the
        request ends."""
        loaders = [*vars(self).values(), *self._pages.values(), *self._with_turns.values()]
        for loader in loaders:
            if isinstance(loader, DataLoader):
                loader.clear_all()
                loader.batch = None
        self.turns_read.clear()

    def sessions_with_turns(
        self, fields: tuple[str, ...]
    ) -> DataLoader[str, values.SessionView | None]:
        """Views read with the turns their sources cite, for a document that asks for them, and
        their sources' items with the properties in `fields` (`Item.from_row`)."""
        if fields not in self._with_turns:
            sessions, who = self.service.sessions, self.who

            async def load(ids: list[str]) -> list[values.SessionView | None]:
                found, turns = await sessions.views_with_turns(who, ids, fields)
                # the turns for `Item.turn`; and, read whole, the same views for any other
                # field that asks them
                self.turns.prime_many(turns)
                if fields == timeline.ITEM_FIELDS:
                    self.sessions.prime_many(found)
                return [found.get(i) for i in ids]

            self._with_turns[fields] = DataLoader(load_fn=load)
        return self._with_turns[fields]

    def page(self, name: str, after: Any, first: int) -> DataLoader[str, list[Any]]:
        """The loader of one list's page shape (`after`, `first`), so sibling parents asking the
        same page share one statement: at most `first + 1` rows each (see `connections`)."""
        shape = (name, _hashable(after), first)
        if shape not in self._pages:
            fetch = self._fetches[name]

            async def load(ids: list[str]) -> list[list[Any] | ValidationError]:
                found = await fetch(ids, after, first)
                # None: `after` is no cursor of that parent's list (an error of its own field)
                return [_page_or_refusal(found.get(i, [])) for i in ids]

            self._pages[shape] = DataLoader(load_fn=load)
        return self._pages[shape]


def settings_of(context: Any) -> Settings:
    """The serving process's settings (the defaults where a context has none, as in tests that
    execute the schema directly)."""
    service = getattr(context, "service", None)
    settings = getattr(service, "settings", None)
    return settings if isinstance(settings, Settings) else Settings.from_environment()


def _page_or_refusal(page: list[Any] | None) -> list[Any] | ValidationError:
    if page is None:
        return ValidationError("after is not a cursor this list gave", "after")
    return page


def _hashable(key: Any) -> Hashable:
    return tuple(key) if isinstance(key, Sequence) and not isinstance(key, str) else key


GraphInfo = Info[Context, None]
