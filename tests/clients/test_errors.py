"""Each error `_tag` the service answers is raised as its own class, with message, field and
request id; a 503 with Retry-After is sent again a bounded number of times. Against real
servers: one whose Neo4j is reached through a proxy the test cuts."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import socket
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pydantic
import pytest
from openbot_memory_client import (
    AgentConflict,
    AsyncOpenBotMemory,
    BadResponse,
    Forbidden,
    GraphQLError,
    InternalError,
    MethodNotAllowed,
    NotFound,
    OpenBotMemory,
    OpenBotMemoryError,
    PayloadTooLarge,
    SessionConflict,
    TurnItem,
    Unauthorized,
    Unavailable,
    Unreachable,
    ValidationError,
)
from openbot_memory_client.core import Call, graphql_data
from openbot_memory_client.errors import graphql_error_of

from app.errors import ServiceError
from app.store.database import Target
from tests import conftest
from tests.conftest import Graph, RunningServer, free_port
from tests.openai_stub import OpenAIStub


def test_every_error_tag_is_its_own_class(
    client: OpenBotMemory, server: RunningServer, start_server: Callable[..., RunningServer],
    ana_token: str, graph: Graph,
) -> None:
    agent = client.create_agent("a").id
    sid = client.create_session(agent).session.id
    client.remember(sid, "budget", "The trip budget is 1500 EUR.")

    raised: list[OpenBotMemoryError] = []

    def expect(cls: type[OpenBotMemoryError], call: Callable[[], object]) -> OpenBotMemoryError:
        with pytest.raises(cls) as caught:
            call()
        assert caught.value.message
        assert caught.value.request_id
        raised.append(caught.value)
        return caught.value

    conflict = expect(SessionConflict, lambda: client.remember(
        sid, "seat", "Window.", expected="v-stale", revision=0))
    assert conflict.status == 409
    client.remember_for_agent(agent, "meals", "No meals.", "decision")
    expect(AgentConflict, lambda: client.forget_for_agent(agent, "meals", expected=0))
    expect(NotFound, lambda: client.get_session("ses-nope"))
    with OpenBotMemory(server.url, "not-a-token") as stranger:
        expect(Unauthorized, lambda: list(stranger.list_agents()))
    expect(Forbidden, lambda: client.create_session(agent, person="ben"))
    invalid = expect(ValidationError, lambda: client.create_agent(""))
    assert invalid.field == "name"
    assert invalid.status == 400
    expect(MethodNotAllowed, lambda: client.send(Call(
        "GET", "/graphql", graphql_data,
        params={"query": 'mutation { fork(sessionId: "x") { id } }'})))
    small = start_server(max_body_bytes=4096)
    with OpenBotMemory(small.url, ana_token) as limited:
        expect(PayloadTooLarge, lambda: limited.record_turn(
            sid, [TurnItem(role="user", content="x" * 10_000)]))
    assert all(isinstance(error, OpenBotMemoryError) for error in raised)
    assert str(invalid).startswith("ValidationError: ")

    # GraphQL errors: by their `extensions.code`, or GraphQLError with the code.
    # Each carries the request id of the answer it came in.
    with pytest.raises(SessionConflict) as stale:
        client.graphql(
            'mutation($s: ID!) { forget(sessionId: $s, expected: "v-0", revision: 0, '
            'key: "budget") { revision } }', {"s": sid})
    assert stale.value.request_id
    with pytest.raises(GraphQLError) as unknown:
        client.graphql("{ nothing }")
    assert unknown.value.message
    assert unknown.value.request_id


def test_an_error_has_the_status_of_the_answer_that_carried_it(
    client: OpenBotMemory, graph: Graph
) -> None:
    # A GraphQL error comes in a 200, whatever its class; an error heard over the WebSocket
    # of `watch` came in no HTTP answer: its status is None
    sid = client.create_session(client.create_agent("a").id).session.id
    with pytest.raises(SessionConflict) as stale:
        client.graphql(
            'mutation($s: ID!) { forget(sessionId: $s, expected: "v-0", revision: 0, '
            'key: "budget") { revision } }', {"s": sid})
    assert stale.value.status == 200
    with pytest.raises(GraphQLError) as unknown:
        client.graphql("{ nothing }")
    assert unknown.value.status == 200
    with pytest.raises(SessionConflict) as over_rest:
        client.forget(sid, "budget", expected="v-0", revision=0)
    assert over_rest.value.status == 409
    with pytest.raises(NotFound) as heard:
        next(client.watch("ses-nope", view_timeout=20))
    assert heard.value.status is None


def test_an_internal_error_has_its_class_and_a_tag_without_one_is_kept() -> None:
    # the service answers a failure of its own as 500 `InternalError` (app/api/telemetry.py),
    # and a refusal made before its code ran with a status of no tag of its own as `HTTPError`
    answers = iter([
        httpx.Response(500, json={"_tag": "InternalError", "message": "internal error"},
                       headers={"X-Request-Id": "rid-500"}),
        httpx.Response(415, json={"_tag": "HTTPError", "message": "Unsupported Media Type"}),
    ])
    with httpx.Client(transport=httpx.MockTransport(lambda _: next(answers))) as http, \
            OpenBotMemory("http://memory.test", "token", http_client=http) as client:
        with pytest.raises(InternalError) as failed:
            client.get_agent("agt-1")
        assert (failed.value.status, failed.value.request_id) == (500, "rid-500")
        assert str(failed.value) == "InternalError: internal error [request rid-500]"
        with pytest.raises(OpenBotMemoryError) as refused:
            client.get_agent("agt-1")
        assert (refused.value.tag, refused.value.status) == ("HTTPError", 415)
        assert str(refused.value).startswith("HTTPError: ")


def test_each_error_code_graphql_answers_is_raised_as_the_class_of_its_tag() -> None:
    # GraphQL answers a ServiceError in a 200, by `extensions.code`: the client knows every
    # code the service has (app/errors.py), as the class its REST `_tag` is raised as
    codes = {cls.code: cls.tag for cls in _subclasses(ServiceError)}
    assert codes  # the service's tree is read
    for code, tag in codes.items():
        error = graphql_error_of({"message": "m", "extensions": {"code": code, "_tag": tag}},
                                 "rid-1")
        assert (error.tag, error.code, error.request_id) == (tag, code, "rid-1"), code


def _subclasses(cls: type[ServiceError]) -> list[type[ServiceError]]:
    return [one for sub in cls.__subclasses__() for one in (sub, *_subclasses(sub))]


def test_a_service_that_does_not_answer_is_unreachable() -> None:
    # Nothing listens on the port: every call, and a watch, is Unreachable, naming the host
    # and what failed, raised from the transport's own exception; sync and async
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    down = f"no answer from 127.0.0.1:{port}: could not connect ("

    def check(caught: pytest.ExceptionInfo[Unreachable], cause: type[Exception]) -> None:
        error = caught.value
        assert isinstance(error, OpenBotMemoryError)
        assert (error.tag, error.status) == ("Unreachable", None)
        assert error.message.startswith(down)
        assert isinstance(error.__cause__, cause)

    with OpenBotMemory(url, "token") as client:
        with pytest.raises(Unreachable) as caught:
            client.get_agent("agt-1")
        check(caught, httpx.ConnectError)
        with pytest.raises(Unreachable) as caught:
            client.graphql("{ agents { nodes { id } } }")
        check(caught, httpx.ConnectError)
        with pytest.raises(Unreachable) as caught:
            next(client.watch("ses-1"))
        check(caught, OSError)

    async def run() -> None:
        async with AsyncOpenBotMemory(url, "token") as aclient:
            with pytest.raises(Unreachable) as caught:
                await aclient.get_agent("agt-1")
            check(caught, httpx.ConnectError)
            with pytest.raises(Unreachable) as caught:
                await anext(aclient.watch("ses-1"))
            check(caught, OSError)

    asyncio.run(run())


def test_a_service_that_answers_too_late_is_unreachable() -> None:
    # A socket that takes the connection and never answers: the client's timeout ends the call
    with socket.create_server(("127.0.0.1", 0)) as silent:
        port = silent.getsockname()[1]
        with OpenBotMemory(f"http://127.0.0.1:{port}", "token", timeout=0.5) as client, \
                pytest.raises(Unreachable) as caught:
            client.get_agent("agt-1")
    assert caught.value.status is None
    assert caught.value.message.startswith(
        f"no answer from 127.0.0.1:{port}: timed out waiting for the answer")
    assert isinstance(caught.value.__cause__, httpx.ReadTimeout)

    async def run() -> None:
        with socket.create_server(("127.0.0.1", 0)) as silent:
            port = silent.getsockname()[1]
            async with AsyncOpenBotMemory(f"http://127.0.0.1:{port}", "token",
                                          timeout=0.5) as aclient:
                with pytest.raises(Unreachable) as caught:
                    await aclient.get_agent("agt-1")
        assert isinstance(caught.value.__cause__, httpx.ReadTimeout)

    asyncio.run(run())


PAGE = "<html><head><title>{title}</title></head><body>" + "filler " * 500 + "END</body></html>"
NOT_THE_SERVICE: dict[str, tuple[int, str, str]] = {  # path: status, content type, body
    "/v1/agents/agt-page": (200, "text/html", PAGE.format(title="Sign in")),
    "/v1/agents/agt-shape": (200, "application/json", '{"unexpected": true}'),
    "/v1/agents/agt-502": (502, "text/html", PAGE.format(title="502 Bad Gateway")),
    "/v1/agents/agt-504": (504, "text/html", PAGE.format(title="504 Gateway Time-out")),
    "/graphql": (404, "text/html", PAGE.format(title="Not Found")),  # no WebSocket upgrade
}


class NotTheService(BaseHTTPRequestHandler):
    """Answers as a proxy or another server would: pages that are not the service's JSON."""

    def do_GET(self) -> None:
        status, kind, body = NOT_THE_SERVICE[self.path]
        encoded = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(encoded)))
        self.end_headers()
        self.wfile.write(encoded)

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture
def not_the_service() -> Iterator[str]:
    """The URL of a local HTTP server answering `NOT_THE_SERVICE`."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), NotTheService)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


def test_an_answer_that_is_not_the_services_is_an_error_of_the_client(
    not_the_service: str,
) -> None:
    # A 2xx body that is not JSON, or not what the call reads, is BadResponse with its status;
    # a gateway's 502 or 504 page is the error of its status. Each message is short: the start
    # of the page at most, never the page
    with OpenBotMemory(not_the_service, "token") as client:
        with pytest.raises(BadResponse) as page:
            client.get_agent("agt-page")
        with pytest.raises(BadResponse) as shape:
            client.get_agent("agt-shape")
        gateway: list[OpenBotMemoryError] = []
        for path in ("agt-502", "agt-504"):
            with pytest.raises(OpenBotMemoryError) as caught:
                client.get_agent(path)
            gateway.append(caught.value)

    assert (page.value.tag, page.value.status) == ("BadResponse", 200)
    assert page.value.message.startswith(
        "HTTP 200 OK, not JSON: '<html><head><title>Sign in</title></head><body>filler ")
    assert (shape.value.status, shape.value.message) == (
        200, "HTTP 200 OK, not the answer the call reads: id: Field required (and 2 more)")
    assert isinstance(shape.value.__cause__, pydantic.ValidationError)
    bad_gateway, timed_out = gateway
    assert (type(bad_gateway), bad_gateway.status) == (OpenBotMemoryError, 502)
    assert bad_gateway.message.startswith("HTTP 502 Bad Gateway, not JSON: '<html><head>")
    assert (type(timed_out), timed_out.status) == (OpenBotMemoryError, 504)
    assert timed_out.message.startswith("HTTP 504 Gateway Timeout, not JSON: '<html><head>")
    for error in (page.value, bad_gateway, timed_out):
        assert len(str(error)) < 200
        assert "END" not in str(error)
        assert "END" not in str(error.body)

    async def run() -> None:
        async with AsyncOpenBotMemory(not_the_service, "token") as aclient:
            with pytest.raises(BadResponse) as page:
                await aclient.get_agent("agt-page")
            assert page.value.status == 200
            assert "END" not in str(page.value)

    asyncio.run(run())


def test_a_watch_that_is_not_upgraded_or_hears_nothing_is_unreachable(
    not_the_service: str, client: OpenBotMemory, server: RunningServer, ana_token: str,
) -> None:
    # a server that answers the WebSocket upgrade with a page, and a watch that hears no
    # message for its view_timeout, are Unreachable as any call that gets no answer; sync and
    # async
    with OpenBotMemory(not_the_service, "token") as elsewhere, \
            pytest.raises(Unreachable) as refused:
        next(elsewhere.watch("ses-1"))
    host = not_the_service.removeprefix("http://")
    assert refused.value.message.startswith(
        f"no answer from {host}: the WebSocket upgrade was refused (")
    sid = client.create_session(client.create_agent("a").id).session.id
    with pytest.raises(Unreachable) as quiet:
        for _ in client.watch(sid, view_timeout=0.5):  # the view now, then nothing
            pass
    assert quiet.value.message.endswith("no message within view_timeout (0.5 s)")

    async def run() -> None:
        async with AsyncOpenBotMemory(not_the_service, "token") as aelsewhere:
            with pytest.raises(Unreachable) as refused:
                await anext(aelsewhere.watch("ses-1"))
            assert "the WebSocket upgrade was refused" in refused.value.message
        async with AsyncOpenBotMemory(server.url, ana_token) as aclient:
            with pytest.raises(Unreachable) as quiet:
                async for _ in aclient.watch(sid, view_timeout=0.5):
                    pass
            assert quiet.value.message.endswith("no message within view_timeout (0.5 s)")

    asyncio.run(run())


class Proxy:
    """A TCP proxy to Neo4j that the test can cut: every connection closed, new ones refused
    at once, until it is let through again."""

    def __init__(self, host: str, port: int) -> None:
        self.upstream = (host, port)
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self.listener.getsockname()[1]
        self.up = True
        self.open: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                near, _ = self.listener.accept()
            except OSError:
                return
            if not self.up:
                near.close()
                continue
            try:
                far = socket.create_connection(self.upstream, timeout=5)
            except OSError:
                near.close()
                continue
            far.settimeout(None)
            with self.lock:
                self.open += [near, far]
            for a, b in ((near, far), (far, near)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        self.up = False
        with self.lock:
            cut, self.open = self.open, []
        for end in cut:
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
            end.close()

    def close(self) -> None:
        self.cut()
        self.listener.close()


@pytest.fixture
def proxied(
    neo4j_target: Target, openai_stub: OpenAIStub, graph: Graph
) -> Iterator[tuple[RunningServer, Proxy]]:
    """A server whose Neo4j is behind a Proxy."""
    address = neo4j_target.uri.split("://", 1)[1]
    host, port = address.rsplit(":", 1)
    proxy = Proxy(host, int(port))
    scheme = neo4j_target.uri.split("://", 1)[0]
    target = dataclasses.replace(neo4j_target, uri=f"{scheme}://127.0.0.1:{proxy.port}")
    running = RunningServer(conftest.test_settings(openai_stub, target), target)
    try:
        yield running, proxy
    finally:
        proxy.up = True
        running.stop()
        proxy.close()


def test_a_503_is_retried_a_bounded_number_of_times(
    proxied: tuple[RunningServer, Proxy], ana_token: str
) -> None:
    server, proxy = proxied
    statuses: list[int] = []

    def heard(response: httpx.Response) -> None:
        statuses.append(response.status_code)

    with OpenBotMemory(server.url, ana_token, retries=2, max_retry_wait=0.2,
                       http_client=httpx.Client(timeout=60,
                                                event_hooks={"response": [heard]})) as client:
        agent = client.create_agent("a")
        proxy.cut()
        with pytest.raises(Unavailable) as down:
            client.get_agent(agent.id)
        assert statuses[-3:] == [503, 503, 503]  # the first answer and two retries
        assert down.value.status == 503
        assert down.value.request_id
        # over GraphQL the database's absence is an error of the answer, of the same class
        with pytest.raises(Unavailable) as down_graphql:
            client.graphql("query($a: ID!) { agent(id: $a) { id } }", {"a": agent.id})
        assert down_graphql.value.request_id
        assert down_graphql.value.message == down.value.message

        # Neo4j comes back after the first 503: the retry is answered.
        statuses.clear()

        def back(response: httpx.Response) -> None:
            proxy.up = True

        client.http.event_hooks["response"].append(back)
        assert client.get_agent(agent.id) == agent
        assert statuses[0] == 503
        assert statuses[-1] == 200
        client.http.close()
