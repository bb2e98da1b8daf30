"""Live views: who watches which session or agent, and the one poll that hears them move.

How changes are heard:

- In this process, at once. Every write transaction that commits calls `Live.wake` (the one
  hook, in `Database.write`), which runs the poll now instead of at its next tick.
- From any other process on the same Neo4j, within a second. While anyone watches, one task
  per process reads what moved for every watched session and agent in ONE statement
  (`cypher/live_marks.cypher`: each session's revision and its ended runs, each agent's
  memory version) every `live_poll_seconds` (0.25 s), and wakes the watches whose marks
  changed. With no watcher the task stops; the next watch starts it again.

A woken watcher reads what changed itself, through the view loaders and the reader's own scope
(a person reaches only what queries let them reach). The marks are never shown to anyone.

A session's revision grows by one with every change (S12-S17), and each version records the
revision it was made at, so the views of revisions a watcher has not seen yet are rebuilt from
immutable versions: one view per revision, in order, however many landed between two polls.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace

from app.domain.agents import AgentMemory
from app.domain.history import MemoryAt
from app.domain.principals import Principal
from app.domain.sessions import Entries, LiveMarks, SessionView
from app.errors import NotFound, Unavailable
from app.memory.agents.memory import AgentMemories
from app.store.database import Database, Tx
from app.store.live import Key, Kind, LiveRepository
from app.store.sessions import SessionRepository

log = logging.getLogger("openbot_memory.live")

# The marks of a session or agent no longer in the graph (its org deleted): past any it had, so
# its watchers read it once more and end as a query of it is answered (not found).
GONE = LiveMarks(revision=2**62, ended=-1, last_ended=-1, version=2**62)
# How many past revisions one read rebuilds for a subscriber behind: its views are held in
# memory until sent, so one far behind is caught up that many at a time.
CATCH_UP = 50


@dataclass
class Watch:
    """One watcher of one session or agent: woken when its marks move (`changed`)."""

    key: Key
    marks: LiveMarks | None = None
    _moved: asyncio.Event = field(default_factory=asyncio.Event)

    async def changed(self) -> LiveMarks:
        """Wait until the marks move (or are first read); the marks now."""
        await self._moved.wait()
        self._moved.clear()
        assert self.marks is not None  # set before the event is
        return self.marks

    def _move(self, marks: LiveMarks) -> None:
        self.marks = marks
        self._moved.set()


@dataclass
class Live:
    """The watches of this process, the poll that feeds them, and what a woken watcher reads."""

    db: Database
    agent_memory: AgentMemories
    poll_seconds: float = 0.25
    _watches: list[Watch] = field(default_factory=list)
    _failing: bool = False
    _wake: asyncio.Event = field(default_factory=asyncio.Event)
    _task: asyncio.Task[None] | None = None

    def wake(self) -> None:
        """A write of this process committed: poll now (a no-op while nobody watches)."""
        if self._watches:
            self._wake.set()

    @contextlib.asynccontextmanager
    async def watch(self, kind: Kind, id: str) -> AsyncIterator[Watch]:
        """Watch a session or agent for as long as the block runs."""
        watch = Watch((kind, id))
        self._watches.append(watch)
        if self._task is None:
            # A context of its own: the poll is the process's, not the first subscriber's
            # request (its statements are no request's cost, its logs carry no request id).
            self._task = asyncio.create_task(self._poll(), context=contextvars.Context())
        self._wake.set()
        try:
            yield watch
        finally:
            self._watches.remove(watch)
            if not self._watches:
                await self.stop()

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _poll(self) -> None:
        while True:
            self._wake.clear()  # before reading, so a commit during the read polls again
            try:
                await self._read_marks()
                self._failing = False
            except Exception as exc:
                if not self._failing:  # once per outage, not four times a second
                    log.warning(
                        "live views: could not read what moved (%s)", exc.__class__.__name__,
                        exc_info=not isinstance(exc, Unavailable),
                    )
                self._failing = True
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.poll_seconds)

    async def _read_marks(self) -> None:
        watched = {watch.key for watch in self._watches}
        sessions = sorted(id for kind, id in watched if kind == "session")
        agents = sorted(id for kind, id in watched if kind == "agent")
        marks = await self.db.read(lambda tx: LiveRepository(tx).marks(sessions, agents))
        for watch in list(self._watches):
            now = marks.get(watch.key, GONE)
            if now != watch.marks:
                watch._move(now)

    async def session_views(
        self, who: Principal, session_id: str, after: int, head: str
    ) -> list[SessionView]:
        """The session's views of the revisions after `after` (whose head was `head`), oldest
        first: at most CATCH_UP of them, so a subscriber far behind is sent its views a
        bounded number at a time; the last one is the view now once they reach it. 404 when
        `who` may not reach the session."""

        async def work(tx: Tx) -> list[SessionView]:
            sessions = SessionRepository(tx)
            views = await sessions.views(who, [session_id])
            if session_id not in views:
                raise NotFound(f"no session {session_id}")
            now = views[session_id]
            if now.session.revision <= after:
                return []
            last = min(now.session.revision - 1, after + CATCH_UP)
            made = await LiveRepository(tx).heads(who, session_id, after, last)
            heads: list[str] = []
            for revision in range(after + 1, last + 1):
                # a configure, or a run that kept nothing, made no version: the head stays
                heads.append(made.get(revision, heads[-1] if heads else head))
            memories = await sessions.memory_at(who, sorted(set(heads))) if heads else {}
            past = [view_at(now, after + 1 + n, h, memories[h]) for n, h in enumerate(heads)]
            return [*past, now] if last == now.session.revision - 1 else past

        return await self.db.read(work)

    async def agent_news(
        self, who: Principal, agent_id: str, shown: AgentMemory
    ) -> tuple[int, AgentMemory | None]:
        """The agent's memory version now, and its view as `who` may see it if that differs
        from `shown`, the view last sent; None if not (A9: a version that touched only
        another member's private entries is no news to them). An erasure's version, which no
        change records, is news where it took an entry `who` saw. 404 without the agent."""
        now = await self.agent_memory.view(who, agent_id)
        return now.version, None if now.entries == shown.entries else now


def view_at(now: SessionView, revision: int, head: str, memory: MemoryAt) -> SessionView:
    """The view a session had at an earlier revision: its head then and the memory of that
    (immutable) version. The settings are today's: a configure keeps no history (S15). A
    revision that made no version (a configure, a run that kept nothing) keeps the head, whose
    processed items then include those of a run that kept nothing AT it."""
    return replace(
        now,
        session=replace(now.session, head=head, revision=revision),
        memory=replace(
            now.memory,
            entries=Entries((entry.key, entry) for entry in memory.entries),
            processed=memory.processed,
        ),
    )
