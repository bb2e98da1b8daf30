"""`OpenBotMemory`: the blocking client. Each method builds its call with `Core` and sends it;
`AsyncOpenBotMemory` (aio.py) has the same methods, awaited."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from typing import Any, Literal, TypeVar

import httpx
from websockets.exceptions import ConnectionClosed, InvalidHandshake
from websockets.sync.client import connect
from websockets.typing import Subprotocol

from openbot_memory_client import live
from openbot_memory_client import models as m
from openbot_memory_client.core import (
    DEFAULT_URL,
    KEEP,
    Call,
    Core,
    Keep,
    timeout_of,
    unmoved,
    unreachable,
)
from openbot_memory_client.errors import SessionConflict

T = TypeVar("T")
Update = Callable[[m.SessionView], m.Command | None]


class OpenBotMemory:
    """A client of the memory service, acting with one token.

    `base_url` and `token` default to `$OPENBOT_MEMORY_URL` (else http://127.0.0.1:8000) and
    `$OPENBOT_TOKEN`. A 503 with `Retry-After` to a call that cannot write twice is sent again
    up to `retries` times. An `http_client` of yours is used as it is, given the service's URL
    and the token (and left open on close).
    """

    def __init__(
        self,
        base_url: str | None = None,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        retries: int = 3,
        max_retry_wait: float = 30.0,
        http_client: httpx.Client | None = None,
    ) -> None:
        self.base_url = (base_url or os.environ.get("OPENBOT_MEMORY_URL") or DEFAULT_URL)
        self.base_url = self.base_url.rstrip("/")
        token = token if token is not None else os.environ.get("OPENBOT_TOKEN", "")
        self.token = token
        self.core = Core(retries=retries, max_retry_wait=max_retry_wait)
        self._own = http_client is None
        self.http = http_client or httpx.Client(timeout=timeout)
        self.http.base_url = httpx.URL(self.base_url)
        self.http.headers["Authorization"] = f"Bearer {token}"

    def close(self) -> None:
        if self._own:
            self.http.close()

    def __enter__(self) -> OpenBotMemory:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def send(self, call: Call[T]) -> T:
        """Send one call; a 503 with `Retry-After` again where the call may be repeated, a bounded
        number of times. A connection that fails or times out is `Unreachable`."""
        attempt, resent = 0, False
        while True:
            try:
                response = self.http.request(
                    call.method, call.path, params=call.params, json=call.body,
                    headers=self.core.headers(),
                    timeout=timeout_of(call, self.http.timeout),
                )
            except httpx.TransportError as exc:
                raise unreachable(self.http.base_url, exc) from exc
            if not resent and self.core.forget_refused_bookmarks(response):
                resent = True  # sent again without them, once
                continue
            delay = self.core.retry_after(call, response, attempt)
            if delay is None:
                return self.core.answer(call, response)
            attempt += 1
            time.sleep(delay)

    # -- agents --------------------------------------------------------------------------
    def create_agent(
        self, name: str, *, shared: bool = False, model: str | None = None
    ) -> m.Agent:
        return self.send(self.core.create_agent(name, shared, model))

    def get_agent(self, agent_id: str) -> m.Agent:
        return self.send(self.core.get_agent(agent_id))

    def list_agents(self, *, page_size: int = 50) -> Iterator[m.Agent]:
        """Every agent of the org, oldest first, read a page at a time."""
        offset = 0
        while True:
            page = self.send(self.core.agents_page(offset, page_size))
            yield from page
            if len(page) < page_size:
                return
            offset += len(page)

    # -- sessions ------------------------------------------------------------------------
    def create_session(
        self, agent: str, *, kind: m.SessionKind | None = None, parent: str | None = None,
        person: str | None = None, model: str | None = None,
    ) -> m.SessionView:
        return self.send(self.core.create_session(agent, kind, parent, person, model))

    def get_session(self, session_id: str) -> m.SessionView:
        return self.send(self.core.get_session(session_id))

    def memory(self, session_id: str) -> m.Memory:
        return self.send(self.core.get_memory(session_id))

    def list_sessions(
        self, *, agent: str | None = None, page_size: int = 50
    ) -> Iterator[m.SessionView]:
        """Every session the token reaches (one agent's, with `agent`), oldest first."""
        offset = 0
        while True:
            page = self.send(self.core.sessions_page(agent, offset, page_size))
            yield from page
            if len(page) < page_size:
                return
            offset += len(page)

    # -- turns, instructions, runs --------------------------------------------------------
    def record_turn(
        self, session_id: str, items: Sequence[m.TurnItem | dict[str, Any]], *,
        model: str | None = None, status: str = "completed", wait: float | None = None,
    ) -> m.TurnView:
        """Record a turn. Items with your own `id`s make a retry safe: the same items sent
        again are the same turn. With `wait=S`, answers once its consolidation run ended."""
        return self.send(self.core.record_turn(session_id, items, model, status, wait))

    def complete_turn(
        self, session_id: str, turn_id: str,
        items: Sequence[m.TurnItem | dict[str, Any]] | None = None,
    ) -> m.TurnView:
        return self.send(self.core.complete_turn(session_id, turn_id, items or []))

    def get_turn(self, session_id: str, turn_id: str) -> m.TurnView:
        return self.send(self.core.get_turn(session_id, turn_id))

    def instructions(self, session_id: str) -> m.Instructions:
        return self.send(self.core.instructions(session_id))

    def runs(self, session_id: str) -> list[m.Run]:
        return self.send(self.core.runs(session_id))

    def get_run(self, session_id: str, run_id: str, *, wait: float | None = None) -> m.Run:
        return self.send(self.core.get_run(session_id, run_id, wait))

    # -- session memory ------------------------------------------------------------------
    def _seen(self, session_id: str, expected: str | None, revision: int | None) -> tuple[
        str, int
    ]:
        known = self.core.known(expected, revision) or self.core.last_seen(session_id)
        if known is None:
            view = self.get_session(session_id)
            known = (view.session.head, view.session.revision)
        return known

    def command(
        self, session_id: str, command: m.Command, *, expected: str | None = None,
        revision: int | None = None,
    ) -> m.SessionView:
        """Send a memory command at `expected` and `revision` (given together): a stale pair
        raises SessionConflict. Without them it is sent at the head and revision this client
        last saw of the session, and where the session moved since (a consolidation run of a
        turn just recorded, another writer), once more at the session read again; a conflict
        where the session did not move (a key the memory lacks), or a Refresh's (its run still
        going), is raised at once."""
        given = self.core.known(expected, revision)
        head, rev = self._seen(session_id, expected, revision)
        try:
            return self.send(self.core.command(session_id, command, head, rev))
        except SessionConflict:
            if given is not None or isinstance(command, m.Refresh):
                # the caller's own head and revision are theirs to read again; a Refresh's
                # conflict is its run still going (or no model): sent again it queues another
                raise
            now = self.get_session(session_id).session
            if (now.head, now.revision) == (head, rev):
                raise
            return self.send(self.core.command(session_id, command, now.head, now.revision))

    def remember(
        self, session_id: str, key: str, content: str, kind: m.Kind = "fact", *,
        expected: str | None = None, revision: int | None = None,
    ) -> m.SessionView:
        command = m.Remember(key=key, content=content, kind=kind)
        return self.command(session_id, command, expected=expected, revision=revision)

    def forget(
        self, session_id: str, key: str, *, expected: str | None = None,
        revision: int | None = None,
    ) -> m.SessionView:
        return self.command(session_id, m.Forget(key=key), expected=expected,
                            revision=revision)

    def configure(
        self, session_id: str, *, use: bool | Keep | None = KEEP,
        generate: bool | Keep | None = KEEP, expected: str | None = None,
        revision: int | None = None,
    ) -> m.SessionView:
        """S15: True/False set a switch, None follows the org again, a switch not given stays."""
        command = self.core.configure_command(use, generate)
        return self.command(session_id, command, expected=expected, revision=revision)

    def refresh(
        self, session_id: str, *, expected: str | None = None, revision: int | None = None
    ) -> m.SessionView:
        return self.command(session_id, m.Refresh(), expected=expected, revision=revision)

    def update(self, session_id: str, fn: Update, retries: int = 5) -> m.SessionView:
        """Read the session, send the command `fn` makes of it (None: nothing to do) at what
        was read, and on SessionConflict read again and retry, at most `retries` times. A
        conflict where the session did not move (a key the memory lacks), or a Refresh's, is
        raised at once."""
        view = self.get_session(session_id)
        attempt = 0
        while True:
            command = fn(view)
            if command is None:
                return view
            try:
                return self.command(session_id, command, expected=view.session.head,
                                    revision=view.session.revision)
            except SessionConflict:
                if attempt >= retries or isinstance(command, m.Refresh):
                    raise
                attempt += 1
                sent, view = view, self.get_session(session_id)
                if unmoved(sent, view):
                    raise

    # -- history -------------------------------------------------------------------------
    def versions(self, session_id: str) -> list[m.Version]:
        return self.send(self.core.versions(session_id))

    def version(
        self, session_id: str, version_id: str, *, offset: int = 0, limit: int = 50
    ) -> m.VersionView:
        return self.send(self.core.version(session_id, version_id, offset, limit))

    def fork(self, session_id: str, *, at: str | None = None) -> m.SessionView:
        return self.send(self.core.fork(session_id, at))

    def revert(
        self, session_id: str, to: str, *, expected: str | None = None,
        revision: int | None = None,
    ) -> m.SessionView:
        head, rev = self._seen(session_id, expected, revision)
        return self.send(self.core.revert(session_id, to, head, rev))

    def promote(self, session_id: str, *, name: str | None = None) -> m.Promoted:
        return self.send(self.core.promote(session_id, name))

    def delete_session(self, session_id: str) -> str:
        """Delete a session: its items and the memory derived from them are erased (its
        forks keep their own memory). Answers its id; it is not found afterwards."""
        return self.send(self.core.delete_session(session_id))

    # -- org -----------------------------------------------------------------------------
    def erase_person(self, person: str) -> m.Erasure:
        """Erase a person's data everywhere it went (an org's service token only); asked
        again, resumes an erasure that stopped, or answers the one that finished."""
        return self.send(self.core.erase_person(person))

    def erasures(self) -> list[m.Erasure]:
        """The org's erasures, newest first (an org's service token only)."""
        return self.send(self.core.erasures())

    def org_settings(self) -> m.OrgSettings:
        return self.send(self.core.org_settings())

    def update_org_settings(
        self, *, use: bool | Keep | None = KEEP, generate: bool | Keep | None = KEEP,
        agent_memory: bool | Keep | None = KEEP, helper_model: str | Keep | None = KEEP,
        model: str | Keep | None = KEEP,
    ) -> m.OrgSettings:
        """Change org defaults; what is not given stays, None sets a switch back to on."""
        return self.send(self.core.update_org_settings(
            use, generate, agent_memory, helper_model, model))

    # -- agent memory --------------------------------------------------------------------
    def agent_memory(self, agent_id: str) -> m.AgentMemory:
        return self.send(self.core.agent_memory(agent_id))

    def agent_command(
        self, agent_id: str, command: m.AgentCommand, *, expected: int | None = None
    ) -> m.AgentMemory:
        """A10: change the agent memory at `expected`, by default the version last seen."""
        if expected is None:
            expected = self.core.seen_versions.get(agent_id)
        if expected is None:
            expected = self.agent_memory(agent_id).version
        return self.send(self.core.agent_command(agent_id, command, expected))

    def remember_for_agent(
        self, agent_id: str, key: str, content: str, kind: m.AgentKind, *,
        about: str | None = None, visibility: m.Visibility = "shared",
        expected: int | None = None,
    ) -> m.AgentMemory:
        command = m.AgentRemember(key=key, content=content, kind=kind, about=about,
                                  visibility=visibility)
        return self.agent_command(agent_id, command, expected=expected)

    def forget_for_agent(
        self, agent_id: str, key: str, *, about: str | None = None, expected: int | None = None
    ) -> m.AgentMemory:
        return self.agent_command(agent_id, m.AgentForget(key=key, about=about),
                                  expected=expected)

    def agent_log(
        self, agent_id: str, *, after: int = 0, page_size: int = 50
    ) -> Iterator[m.LogEntry]:
        """Every version of the agent memory after `after`, oldest first, a page at a time."""
        while True:
            page = self.send(self.core.agent_log_page(agent_id, after, page_size))
            yield from page
            if len(page) < page_size:
                return
            after = page[-1].version

    def learning_jobs(self, agent_id: str) -> list[m.LearningJob]:
        return self.send(self.core.learning_jobs(agent_id))

    # -- search, GraphQL, live views --------------------------------------------------------
    def search(
        self, query: str, *, session: str | None = None, agent: str | None = None,
        limit: int | None = None, offset: int | None = None,
        status: Literal["active", "retracted"] | None = None,
    ) -> list[m.Hit]:
        """Hits for `query` (Lucene syntax), best first: `limit` of them (20 by default) after
        the first `offset`; with `status`, only entries remembered now (active) or forgotten
        (retracted)."""
        return self.send(self.core.search(query, session, agent, limit, offset, status))

    def graphql(self, query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        """Run a GraphQL document; its `data`, or its first error raised."""
        return self.send(self.core.graphql(query, variables))

    def watch(
        self, session_id: str, *, view_timeout: float | None = None
    ) -> Generator[m.SessionView, None, None]:
        """The Session view now, then one per revision after every change, for as long as
        you iterate (`view_timeout`: seconds to wait for each message, None for ever; then
        `Unreachable`, as for a socket that cannot be opened or upgraded)."""
        url = live.socket_url(self.base_url)
        try:
            opened = connect(url, subprotocols=[Subprotocol(live.PROTOCOL)])
        except OSError as exc:
            raise unreachable(self.base_url, exc) from exc
        except InvalidHandshake as exc:  # a proxy's answer, say
            raise unreachable(self.base_url, exc, "the WebSocket upgrade was refused") from exc
        try:
            with opened as ws:
                ws.send(live.init(self.token))
                while True:
                    ack, reply = live.acked(ws.recv(timeout=view_timeout))
                    if reply:
                        ws.send(reply)
                    if ack:
                        break
                ws.send(live.subscribe(session_id))
                while True:
                    reply, view = live.read(ws.recv(timeout=view_timeout))
                    if reply:
                        ws.send(reply)
                    if view is not None:
                        self.core.saw(view)
                        yield view
        except live.Ended:
            return
        except TimeoutError as exc:
            raise unreachable(self.base_url, exc,
                              f"no message within view_timeout ({view_timeout} s)") from exc
        except ConnectionClosed as exc:
            code = exc.rcvd.code if exc.rcvd else None
            raise live.closed(code, exc.rcvd.reason if exc.rcvd else "") from exc
