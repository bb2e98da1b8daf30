"""What both clients share: each call as a value (`Call`: method, path, query, body, and how its
answer reads), the head and revision last seen per session, and when to retry a 503. The sync
and async clients only send calls."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar
from urllib.parse import quote

import httpx
import pydantic
from pydantic import BaseModel

from openbot_memory_client import models as m
from openbot_memory_client.errors import (
    BadResponse,
    OpenBotMemoryError,
    Unreachable,
    error_of,
    graphql_error_of,
    seconds,
)

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

DEFAULT_URL = "http://127.0.0.1:8000"
BOOKMARK = "OpenBot-Bookmark"  # the bookmark of a write, passed back to read at least its state
MAX_BOOKMARKS = 8  # how many one request may send back
WAIT_MARGIN = 10.0  # seconds a `?wait=S` call may take past S
REFRESH_SECONDS = 120.0  # the longest a Refresh waits on the service for the run it queues
EXCERPT = 100  # characters of an answer that is not JSON an error quotes
MUTATION = re.compile(r"\bmutation\b")  # a word only a document that may write holds

# What failed, by the exception a connection raised: the first class that fits names it.
FAILURES: tuple[tuple[type[Exception], str], ...] = (
    (httpx.ConnectTimeout, "timed out connecting"),
    (httpx.ReadTimeout, "timed out waiting for the answer"),
    (httpx.WriteTimeout, "timed out sending the request"),
    (httpx.PoolTimeout, "timed out waiting for a free connection"),
    (httpx.ConnectError, "could not connect"),
    (httpx.ReadError, "the connection failed while reading the answer"),
    (httpx.WriteError, "the connection failed while sending the request"),
    (httpx.RemoteProtocolError, "the connection broke off the answer"),
    (TimeoutError, "timed out connecting"),  # a WebSocket's opening
    (OSError, "could not connect"),
)


def _bookmarks(header: str | None) -> tuple[str, ...]:
    """The bookmarks an `OpenBot-Bookmark` header holds (comma-separated; httpx joins a header
    given twice with ", ")."""
    return tuple(part.strip() for part in (header or "").split(",") if part.strip())


def unreachable(
    base_url: str | httpx.URL, exc: Exception, what: str | None = None
) -> Unreachable:
    """The error a connection to the service that failed (`exc`) is: its host, what failed."""
    what = what or next(
        (text for cls, text in FAILURES if isinstance(exc, cls)), type(exc).__name__)
    timeout = isinstance(exc, (httpx.TimeoutException, TimeoutError))  # says "timed out"
    detail = f" ({exc})" if str(exc) and not timeout else ""
    return Unreachable(f"no answer from {httpx.URL(base_url).netloc.decode()}: {what}{detail}")


def _status(response: httpx.Response) -> str:
    return f"HTTP {response.status_code} {response.reason_phrase}".rstrip()


def _excerpt(response: httpx.Response) -> str:
    """The start of an answer that is not JSON, on one line, for an error to quote."""
    text = " ".join(response.text.split())
    return repr(text[:EXCERPT] + "…" if len(text) > EXCERPT else text)


def _misread(error: pydantic.ValidationError) -> str:
    """Where an answer does not read as the call's answer, in short (not the values)."""
    first, *rest = error.errors(include_url=False, include_input=False)
    where = ".".join(str(part) for part in first["loc"]) or "the answer"
    more = f" (and {len(rest)} more)" if rest else ""
    return f"{where}: {first['msg']}{more}"


class Keep:
    """The value of a switch not sent: the override (or org default) is kept as it is."""

    def __repr__(self) -> str:
        return "KEEP"


KEEP = Keep()


@dataclass(frozen=True, slots=True)
class Call(Generic[T]):
    """One request and how its JSON answer becomes `T`."""

    method: str
    path: str
    read: Callable[[Any], T]
    params: dict[str, Any] | None = None
    body: dict[str, Any] | None = None
    timeout: float | None = None
    # The session whose head and revision the call sends (or the agent whose memory version):
    # a conflict means the client's copy is stale, and the next command reads it first.
    at_session: str | None = None
    at_agent: str | None = None
    # A call that records a turn, whose answer is the session as the turn left it; `fresh` is
    # the status that says this call recorded it, so that the answer is the session now (a
    # retry is answered 200 with the turn as first recorded; a completion is answered 200
    # either way, so no status says it).
    records_turn: bool = False
    fresh: int | None = None
    # Whether sending the call again after a 503 cannot write twice: a read (a GraphQL query
    # too), or a write whose repeat is answered as the first (a turn or a completion whose
    # items carry ids, the org settings).
    # A 503 may come after the write committed (the connection lost during the commit, or the
    # wait for a turn's run); other writes are the caller's to send again.
    idempotent: bool = False

    @property
    def repeatable(self) -> bool:
        return self.idempotent or self.method == "GET"


def unmoved(sent: m.SessionView, read: m.SessionView) -> bool:
    """Whether a session read again after a SessionConflict is still at what the command was
    sent at: the conflict is not a race (a key the memory lacks, a run still going), and
    sending it again cannot land."""
    return (read.session.head, read.session.revision) == (sent.session.head,
                                                          sent.session.revision)


def model(cls: type[M]) -> Callable[[Any], M]:
    return cls.model_validate


def nothing(_: Any) -> None:
    return None


def timeout_of(call: Call[Any], client: httpx.Timeout) -> httpx.Timeout:
    """The timeouts to send `call` with: the client's, with the call's for reading its answer
    where it waits longer (a `wait`, a Refresh) than the client would."""
    if call.timeout is None or client.read is None or client.read >= call.timeout:
        return client
    return httpx.Timeout(connect=client.connect, read=call.timeout, write=client.write,
                         pool=client.pool)


def _query(**values: Any) -> dict[str, Any]:
    return {name: value for name, value in values.items() if value is not None}


def _wait(wait: float | None) -> tuple[dict[str, Any], float | None]:
    if not wait:
        return {}, None
    return {"wait": wait}, wait + WAIT_MARGIN


def _switches(**values: bool | Keep | None) -> dict[str, Any]:
    return {name: value for name, value in values.items() if not isinstance(value, Keep)}


@dataclass
class Core:
    """Builds every call; remembers the head and revision of each session and the version of
    each agent memory the client last saw, to send them back with the next command, and the
    bookmarks of the writes it was answered (`OpenBot-Bookmark`), to send with every next
    request: each request reads at least what the client wrote before it, on any replica (one
    client is one causal chain).

    An answer's bookmark stands for those its request sent, which its transaction read at
    least: it replaces them. Requests sent at once (the asyncio client's) each add theirs, as
    none knows which of their writes came last; the newest `MAX_BOOKMARKS` are kept, as many as
    the service takes."""

    retries: int = 3
    max_retry_wait: float = 30.0
    seen: dict[str, tuple[str, int]] = field(default_factory=dict)
    seen_versions: dict[str, int] = field(default_factory=dict)
    bookmarks: tuple[str, ...] = ()

    def headers(self) -> dict[str, str]:
        """The headers of the next request: the bookmarks kept, if any."""
        return {BOOKMARK: ",".join(self.bookmarks)} if self.bookmarks else {}

    def keep_bookmark(self, response: httpx.Response) -> None:
        """Keep the bookmarks of `response`, in place of those its request sent."""
        given = _bookmarks(response.headers.get(BOOKMARK))
        if not given:
            return
        sent = set(_bookmarks(response.request.headers.get(BOOKMARK))) | set(given)
        kept = [b for b in self.bookmarks if b not in sent]
        self.bookmarks = (*kept, *given)[-MAX_BOOKMARKS:]

    def forget_refused_bookmarks(self, response: httpx.Response) -> bool:
        """Whether the service refused the bookmarks the request sent (ones it never gave: its
        database was made anew), over REST (a 400 on the header) or GraphQL (its first error's
        field); those are then forgotten, others sent at once kept, so that the request is
        sent again without them. A refused request ran nothing."""
        sent = _bookmarks(response.request.headers.get(BOOKMARK))
        if not sent or response.status_code not in (200, 400):
            return False
        try:
            body = response.json()
            errors = body.get("errors") if response.status_code == 200 else [
                {"extensions": body}]
            refused = bool(errors) and errors[0].get("extensions", {}).get("field") == BOOKMARK
        except (ValueError, AttributeError, TypeError):
            return False
        if refused:
            self.bookmarks = tuple(b for b in self.bookmarks if b not in sent)
        return refused

    # -- answers -------------------------------------------------------------------------
    def retry_after(self, call: Call[Any], response: httpx.Response, attempt: int) -> float | None:
        """Seconds to wait before sending again, or None: a 503 with `Retry-After` to a call
        that may be sent again, at most `retries` times, each wait capped at
        `max_retry_wait`."""
        if response.status_code != 503 or attempt >= self.retries or not call.repeatable:
            return None
        wait = seconds(response.headers.get("Retry-After"))
        return None if wait is None else min(wait, self.max_retry_wait)

    @staticmethod
    def known(expected: str | None, revision: int | None) -> tuple[str, int] | None:
        """The head and revision a caller gave, or None to send those last seen: both or
        neither, as a command is checked against the pair."""
        if expected is None and revision is None:
            return None
        if expected is None or revision is None:
            raise ValueError("expected and revision are given together, or neither")
        return expected, revision

    def answer(self, call: Call[T], response: httpx.Response) -> T:
        """The answer as `T`, or the error it is, raised; what it shows of a session or an
        agent memory is remembered."""
        request_id = response.headers.get("X-Request-Id")
        status = response.status_code
        self.keep_bookmark(response)
        readable = True
        try:
            data = response.json() if response.content else None
        except ValueError:  # not the service's answer: a proxy's page, say
            data, readable = None, False
        if status >= 400:
            if status == 409 and call.at_session is not None:
                self.seen.pop(call.at_session, None)
            if status == 409 and call.at_agent is not None:
                self.seen_versions.pop(call.at_agent, None)
            if data is None:
                shown = f", not JSON: {_excerpt(response)}" if response.content else ""
                data = {"message": f"{_status(response)}{shown}"}
            raise error_of(status, data, request_id,
                           seconds(response.headers.get("Retry-After")))
        if not readable:
            raise BadResponse(f"{_status(response)}, not JSON: {_excerpt(response)}",
                              request_id=request_id, status=status)
        try:
            value = call.read(data)
        except OpenBotMemoryError as error:  # an error a GraphQL answer holds
            error.request_id = error.request_id or request_id
            error.status = status  # that of the answer that carried it
            raise
        except pydantic.ValidationError as exc:
            raise BadResponse(f"{_status(response)}, not the answer the call reads: "
                              f"{_misread(exc)}",
                              request_id=request_id, status=status) from exc
        if isinstance(value, m.TurnView):
            self.saw_turn(value, call, response.status_code)
        else:
            self.saw(value)
        return value

    def saw_turn(self, turn: m.TurnView, call: Call[Any], status: int) -> None:
        """A turn's answer says the session as that turn left it. It is the session now only
        when the call just recorded the turn and did not wait for its run (which may have moved
        the session since); otherwise a recording call leaves the next command to read the
        session first, and a turn read later says nothing of the session now."""
        if not call.records_turn:
            return
        if status == call.fresh and turn.run is None:
            self.saw_session(turn.session.id, turn.session.head, turn.session.revision)
        else:
            self.seen.pop(turn.session.id, None)

    def saw(self, value: object) -> None:
        if isinstance(value, m.SessionView):
            self.saw_session(value.session.id, value.session.head, value.session.revision)
        elif isinstance(value, list):
            for one in value:
                if isinstance(one, m.SessionView):
                    self.saw(one)

    def saw_session(self, session_id: str, head: str, revision: int) -> None:
        known = self.seen.get(session_id)
        if known is None or known[1] <= revision:
            self.seen[session_id] = (head, revision)

    def saw_agent(self, agent_id: str) -> Callable[[Any], m.AgentMemory]:
        def read(data: Any) -> m.AgentMemory:
            memory = m.AgentMemory.model_validate(data)
            # versions only grow: of answers that arrive out of order, the newest stands
            known = self.seen_versions.get(agent_id, memory.version)
            self.seen_versions[agent_id] = max(known, memory.version)
            return memory

        return read

    def last_seen(self, session_id: str) -> tuple[str, int] | None:
        return self.seen.get(session_id)

    # -- agents --------------------------------------------------------------------------
    def create_agent(self, name: str, shared: bool, model_name: str | None) -> Call[m.Agent]:
        body = {"name": name, "shared": shared, **_query(model=model_name)}
        return Call("POST", "/v1/agents", model(m.Agent), body=body)

    def get_agent(self, agent_id: str) -> Call[m.Agent]:
        return Call("GET", f"/v1/agents/{agent_id}", model(m.Agent))

    def agents_page(self, offset: int, limit: int) -> Call[list[m.Agent]]:
        return Call("GET", "/v1/agents", lambda data: m.Agents.model_validate(data).agents,
                    params={"offset": offset, "limit": limit})

    # -- sessions ------------------------------------------------------------------------
    def create_session(
        self, agent: str, kind: str | None, parent: str | None, person: str | None,
        model_name: str | None,
    ) -> Call[m.SessionView]:
        body = {"agent": agent, **_query(kind=kind, parent=parent, person=person,
                                         model=model_name)}
        return Call("POST", "/v1/sessions", model(m.SessionView), body=body)

    def get_session(self, session_id: str) -> Call[m.SessionView]:
        return Call("GET", f"/v1/sessions/{session_id}", model(m.SessionView))

    def get_memory(self, session_id: str) -> Call[m.Memory]:
        return Call("GET", f"/v1/sessions/{session_id}/memory", model(m.Memory))

    def sessions_page(
        self, agent: str | None, offset: int, limit: int
    ) -> Call[list[m.SessionView]]:
        return Call("GET", "/v1/sessions",
                    lambda data: m.Sessions.model_validate(data).sessions,
                    params={"offset": offset, "limit": limit, **_query(agent=agent)})

    # -- turns, instructions, runs --------------------------------------------------------
    def record_turn(
        self, session_id: str, items: Sequence[m.TurnItem | dict[str, Any]], model_name: str | None,
        status: str, wait: float | None,
    ) -> Call[m.TurnView]:
        params, timeout = _wait(wait)
        body: dict[str, Any] = {"items": m.items_of(items), **_query(model=model_name)}
        if status != "completed":
            body["status"] = status
        return Call("POST", f"/v1/sessions/{session_id}/turns", model(m.TurnView),
                    params=params, body=body, timeout=timeout, records_turn=True, fresh=201,
                    idempotent=all(item.get("id") for item in body["items"]))

    def complete_turn(
        self, session_id: str, turn_id: str, items: Sequence[m.TurnItem | dict[str, Any]]
    ) -> Call[m.TurnView]:
        return Call("POST", f"/v1/sessions/{session_id}/turns/{turn_id}/complete",
                    model(m.TurnView), body={"items": m.items_of(items)}, records_turn=True,
                    idempotent=all(item.get("id") for item in m.items_of(items)))

    def get_turn(self, session_id: str, turn_id: str) -> Call[m.TurnView]:
        return Call("GET", f"/v1/sessions/{session_id}/turns/{turn_id}", model(m.TurnView))

    def instructions(self, session_id: str) -> Call[m.Instructions]:
        return Call("GET", f"/v1/sessions/{session_id}/instructions", model(m.Instructions))

    def runs(self, session_id: str) -> Call[list[m.Run]]:
        return Call("GET", f"/v1/sessions/{session_id}/runs",
                    lambda data: m.Runs.model_validate(data).runs)

    def get_run(self, session_id: str, run_id: str, wait: float | None) -> Call[m.Run]:
        params, timeout = _wait(wait)
        return Call("GET", f"/v1/sessions/{session_id}/runs/{run_id}", model(m.Run),
                    params=params, timeout=timeout)

    # -- session memory ------------------------------------------------------------------
    def command(
        self, session_id: str, command: m.Command, expected: str, revision: int
    ) -> Call[m.SessionView]:
        body = {"expected": expected, "revision": revision, "command": command.to_json()}
        waits = isinstance(command, m.Refresh)  # answered once the run it queues has ended
        return Call("POST", f"/v1/sessions/{session_id}/memory", model(m.SessionView),
                    body=body, at_session=session_id,
                    timeout=REFRESH_SECONDS + WAIT_MARGIN if waits else None)

    @staticmethod
    def configure_command(use: bool | Keep | None, generate: bool | Keep | None) -> m.Configure:
        return m.Configure.model_validate(_switches(use=use, generate=generate))

    # -- history -------------------------------------------------------------------------
    def versions(self, session_id: str) -> Call[list[m.Version]]:
        return Call("GET", f"/v1/sessions/{session_id}/versions",
                    lambda data: m.Versions.model_validate(data).versions)

    def version(
        self, session_id: str, version_id: str, offset: int, limit: int
    ) -> Call[m.VersionView]:
        return Call("GET", f"/v1/sessions/{session_id}/versions/{version_id}",
                    model(m.VersionView), params={"offset": offset, "limit": limit})

    def fork(self, session_id: str, at: str | None) -> Call[m.SessionView]:
        return Call("POST", f"/v1/sessions/{session_id}/fork", model(m.SessionView),
                    body=_query(at=at))

    def revert(
        self, session_id: str, to: str, expected: str, revision: int
    ) -> Call[m.SessionView]:
        body = {"expected": expected, "revision": revision, "to": to}
        return Call("POST", f"/v1/sessions/{session_id}/revert", model(m.SessionView),
                    body=body, at_session=session_id)

    def promote(self, session_id: str, name: str | None) -> Call[m.Promoted]:
        return Call("POST", f"/v1/sessions/{session_id}/promote", model(m.Promoted),
                    body=_query(name=name))

    def delete_session(self, session_id: str) -> Call[str]:
        return Call("DELETE", f"/v1/sessions/{session_id}",
                    lambda data: m.Deleted.model_validate(data).deleted)

    # -- org -----------------------------------------------------------------------------
    def erase_person(self, person: str) -> Call[m.Erasure]:
        return Call("POST", f"/v1/org/persons/{quote(person, safe='')}/erase",
                    lambda data: m.ErasureView.model_validate(data).erasure)

    def erasures(self) -> Call[list[m.Erasure]]:
        return Call("GET", "/v1/org/erasures",
                    lambda data: m.Erasures.model_validate(data).erasures)

    def org_settings(self) -> Call[m.OrgSettings]:
        return Call("GET", "/v1/org/settings", model(m.OrgSettings))

    def update_org_settings(
        self, use: bool | Keep | None, generate: bool | Keep | None,
        agent_memory: bool | Keep | None, helper_model: str | Keep | None,
        model_name: str | Keep | None,
    ) -> Call[m.OrgSettings]:
        body: dict[str, Any] = {}
        memory = _switches(use=use, generate=generate)
        if memory:
            body["memory"] = memory
        for name, value in (("agentMemory", agent_memory), ("helperModel", helper_model),
                            ("model", model_name)):
            if not isinstance(value, Keep):
                body[name] = value
        return Call("PATCH", "/v1/org/settings", model(m.OrgSettings), body=body,
                    idempotent=True)

    # -- agent memory --------------------------------------------------------------------
    def agent_memory(self, agent_id: str) -> Call[m.AgentMemory]:
        return Call("GET", f"/v1/agents/{agent_id}/memory", self.saw_agent(agent_id))

    def agent_command(
        self, agent_id: str, command: m.AgentCommand, expected: int
    ) -> Call[m.AgentMemory]:
        body = {"expected": expected, "command": command.to_json()}
        return Call("POST", f"/v1/agents/{agent_id}/memory", self.saw_agent(agent_id),
                    body=body, at_agent=agent_id)

    def agent_log_page(self, agent_id: str, after: int, limit: int) -> Call[list[m.LogEntry]]:
        return Call("GET", f"/v1/agents/{agent_id}/memory/log",
                    lambda data: m.AgentLog.model_validate(data).changes,
                    params={"after": after, "limit": limit})

    def learning_jobs(self, agent_id: str) -> Call[list[m.LearningJob]]:
        return Call("GET", f"/v1/agents/{agent_id}/learning",
                    lambda data: m.LearningJobs.model_validate(data).jobs)

    # -- search and GraphQL ----------------------------------------------------------------
    def search(
        self, query: str, session: str | None, agent: str | None, limit: int | None,
        offset: int | None = None, status: str | None = None,
    ) -> Call[list[m.Hit]]:
        return Call("GET", "/v1/search",
                    lambda data: m.SearchResults.model_validate(data).hits,
                    params={"q": query, **_query(session=session, agent=agent, status=status,
                                                 offset=offset, limit=limit)})

    def graphql(self, query: str, variables: dict[str, Any] | None) -> Call[dict[str, Any]]:
        # a document without the word `mutation` runs no mutation: sent again, it writes
        # nothing (one holding the word, in a string too, is left to the caller)
        return Call("POST", "/graphql", graphql_data,
                    body={"query": query, "variables": variables or {}},
                    idempotent=MUTATION.search(query) is None)


def graphql_data(answer: Any) -> dict[str, Any]:
    """The `data` of a GraphQL answer; its first error, raised as the class of its code."""
    errors = answer.get("errors") if isinstance(answer, dict) else None
    if errors:
        raise graphql_error_of(errors[0], None)
    data = answer.get("data") if isinstance(answer, dict) else None
    return data if isinstance(data, dict) else {}

