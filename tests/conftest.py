"""One real Neo4j for the whole run, a real server in-process, and a clean graph per test.

Neo4j is found in this order: `NEO4J_URI` if set; a testcontainers `Neo4jContainer` when a
Docker daemon answers; otherwise the project's own local Neo4j (`app.store.local_server`).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

import httpx
import neo4j
import pytest
import uvicorn
from pydantic import SecretStr
from starlette.applications import Starlette

from app.api.app import create_app
from app.config import Settings
from app.domain.jobs import JobKind
from app.memory.access.tokens import Tokens
from app.memory.service import Service
from app.store import local_server
from app.store.database import Database, Target, resolve_target
from app.store.jobs import JobRepository
from tests.openai_stub import OpenAIStub

ROOT = Path(__file__).resolve().parents[1]


def _docker_answers() -> bool:
    docker = shutil.which("docker")
    if docker is None:
        return False
    try:
        answer = subprocess.run([docker, "info"], capture_output=True, timeout=15, check=False)
    except subprocess.TimeoutExpired:
        return False
    return answer.returncode == 0


def neo4j_state_dir() -> Path:
    """Where this run keeps its local Neo4j: `OPENBOT_MEMORY_TEST_STATE` lets parallel runs
    each keep one of their own, and each pytest-xdist worker (`scripts/check` runs two) keeps
    its own beside it, since every test starts from an empty graph."""
    state = os.environ.get("OPENBOT_MEMORY_TEST_STATE", str(ROOT / ".openbot-memory-test"))
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    return Path(f"{state}-{worker}" if worker else state)


@pytest.fixture(scope="session")
def neo4j_target() -> Iterator[Target]:
    if Settings().neo4j_uri:  # NEO4J_URI and friends, read as the service reads them
        yield resolve_target(Settings())
        return
    if _docker_answers():
        from testcontainers.neo4j import Neo4jContainer

        with Neo4jContainer("neo4j:5.26-community") as container:
            yield Target(container.get_connection_url(), "neo4j", container.password, "neo4j")
        return
    settings = Settings(state_dir=neo4j_state_dir())
    already = local_server.status(settings) is not None
    server = local_server.start(settings)
    yield Target(server.bolt_uri, server.user, server.password, "neo4j")
    if not already:
        local_server.stop(settings)


@pytest.fixture
def local_neo4j(neo4j_target: Target) -> local_server.LocalServer:
    """The project's local Neo4j, when it is the one this run tests against; a test that needs
    it is skipped when the run uses another (NEO4J_URI, or testcontainers when Docker answers).
    """
    running = local_server.status(Settings(state_dir=neo4j_state_dir()))
    if running is None or running.bolt_uri != neo4j_target.uri:
        pytest.skip("this run's Neo4j is not the local one (NEO4J_URI, or testcontainers)")
    return running


@pytest.fixture(scope="session")
def graph_driver(neo4j_target: Target) -> Iterator[neo4j.Driver]:
    with neo4j.GraphDatabase.driver(
        neo4j_target.uri,
        auth=(neo4j_target.user, neo4j_target.password),
        notifications_min_severity="OFF",
    ) as driver:
        yield driver


class Graph:
    """Read the graph the way an analyst would, to assert what a change left behind."""

    def __init__(self, driver: neo4j.Driver, database: str) -> None:
        self.driver = driver
        self.database = database

    def rows(self, query: str, **params: Any) -> list[dict[str, Any]]:
        records, _, _ = self.driver.execute_query(query, params, database_=self.database)
        return [record.data() for record in records]

    def value(self, query: str, **params: Any) -> Any:
        rows = self.rows(query, **params)
        assert len(rows) == 1, rows
        return next(iter(rows[0].values()))


@pytest.fixture(scope="session")
def openai_stub() -> Iterator[OpenAIStub]:
    stub = OpenAIStub()
    yield stub
    stub.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class RunningServer:
    """A real uvicorn serving the app on a free port, in a thread of the test process."""

    def __init__(
        self, settings: Settings, target: Target, ready: bool = True, **app_options: Any
    ) -> None:
        """Serve, and unless not `ready`, wait until `/readyz` says ready (warmed up)."""
        self.settings = settings
        self.app: Starlette = create_app(settings, target, **app_options)
        # The socket is bound here and handed to uvicorn, so no other server of the run (in
        # another pytest worker) can take its port between a port found free and the bind.
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(self.app, log_level="warning", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.socket]}, daemon=True
        )
        self.thread.start()
        # the start connects to Neo4j and plans the statements: seconds, or a minute on a
        # loaded machine whose Neo4j is still starting
        deadline = time.monotonic() + 300
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test server did not start")
            time.sleep(0.02)
        deadline = time.monotonic() + 300  # a warm-up on a cold Neo4j and a loaded machine
        while ready and httpx.get(f"{self.url}/readyz", timeout=30).status_code != 200:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the test server did not get ready")
            time.sleep(0.02)

    @property
    def service(self) -> Service:
        service: Service = self.app.state.service
        return service

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
        self.socket.close()


@pytest.fixture(autouse=True)
def close_clients() -> Iterator[None]:
    """A test that fails before closing its clients does not leave their sockets to be found
    (as a ResourceWarning) in whichever test runs next."""
    yield
    while Api.opened:
        Api.opened.pop().close()


@contextmanager
def claims_nothing(*servers: RunningServer) -> Iterator[None]:
    """While inside, `servers` claim no new consolidation run or learning job: every server
    shares the test Neo4j, so a test that must see a job run in its own server pauses the
    others."""
    pools = [pool for s in servers
             for pool in (s.service.consolidation.pool, s.service.learning.pool)]
    for pool in pools:
        pool.paused = True
    try:
        yield
    finally:
        for pool in pools:
            pool.paused = False


def first_claim_renews_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker of a job's first claim renews nothing: its lease runs out while it works, and
    another worker may claim the job again."""
    renew = JobRepository.extend

    async def renew_but_the_first_claim(
        self: JobRepository, kind: JobKind, job: str, attempt: int, until: int
    ) -> None:
        if attempt > 1:
            await renew(self, kind, job, attempt, until)

    monkeypatch.setattr(JobRepository, "extend", renew_but_the_first_claim)


def test_settings(stub: OpenAIStub, target: Target, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "neo4j_uri": target.uri,
        "neo4j_user": target.user,
        "neo4j_password": SecretStr(target.password),
        "openai_base_url": stub.url,
        "openai_api_key": SecretStr("test-key"),
        "model_timeout_seconds": 60.0,  # a gated model waits on its test, on a loaded machine
        "model_retries": 0,
        "worker_poll_seconds": 0.2,
        "run_lease_seconds": 3.0,
        # the warm-up only plans the statements (its rounds cost seconds per server; the
        # warm-up's own tests run them)
        "warmup_rounds": 0,
    }
    values.update(overrides)
    return Settings.model_validate(values)


@pytest.fixture(scope="session")
def server(neo4j_target: Target, openai_stub: OpenAIStub) -> Iterator[RunningServer]:
    running = RunningServer(test_settings(openai_stub, neo4j_target), neo4j_target)
    yield running
    running.stop()


@pytest.fixture
def start_server(
    neo4j_target: Target, openai_stub: OpenAIStub
) -> Iterator[Callable[..., RunningServer]]:
    """Start another server with other settings (e.g. a smaller instruction budget)."""
    started: list[RunningServer] = []

    def start(ready: bool = True, **overrides: Any) -> RunningServer:
        running = RunningServer(
            test_settings(openai_stub, neo4j_target, **overrides), neo4j_target, ready=ready
        )
        started.append(running)
        return running

    yield start
    for running in started:
        running.stop()


@pytest.fixture(params=[True, False], ids=["fast_path", "plain_path"])
def graphql_fast_path(
    request: pytest.FixtureRequest, server: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> bool:
    """A GraphQL test runs twice: with the execution fast path on and off
    (`graphql_fast_path`), in the run's server and in any server the test starts."""
    fast: bool = request.param
    monkeypatch.setattr(server.settings, "graphql_fast_path", fast)
    monkeypatch.setenv("OPENBOT_MEMORY_GRAPHQL_FAST_PATH", str(fast).lower())
    return fast


def _idle(graph: Graph) -> bool:
    pending = graph.value(
        "MATCH (r) WHERE (r:Run OR r:LearningJob) AND r.status IN ['queued', 'running'] "
        "RETURN count(r)"
    )
    return int(pending) == 0


@pytest.fixture
def graph(
    graph_driver: neo4j.Driver, neo4j_target: Target, openai_stub: OpenAIStub
) -> Iterator[Graph]:
    """An empty graph (schema in place) for each test; afterwards, wait for runs to settle."""
    g = Graph(graph_driver, neo4j_target.database)
    g.rows("MATCH (n) DETACH DELETE n")
    openai_stub.reset()
    yield g
    deadline = time.monotonic() + 15
    while not _idle(g) and time.monotonic() < deadline:
        time.sleep(0.05)


class Api:
    """An HTTP client acting for one person of one org, with the calls tests repeat. Every
    client a test opens is closed when the test ends (`close_clients`), even when it fails."""

    opened: ClassVar[list[httpx.Client]] = []

    def __init__(self, base_url: str, token: str) -> None:
        self.token = token
        self.http = httpx.Client(
            base_url=base_url, headers={"Authorization": f"Bearer {token}"}, timeout=60
        )
        Api.opened.append(self.http)

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.http.get(path, **kwargs)

    def post(self, path: str, body: Any = None, **kwargs: Any) -> httpx.Response:
        return self.http.post(path, json=body, **kwargs)

    def patch(self, path: str, body: Any = None) -> httpx.Response:
        return self.http.patch(path, json=body)

    def ok(self, response: httpx.Response, status: int = 200) -> Any:
        assert response.status_code == status, response.text
        return response.json()

    def agent(self, name: str = "trip planner", **fields: Any) -> dict[str, Any]:
        body: dict[str, Any] = self.ok(
            self.post("/v1/agents", {"name": name, **fields}), 201
        )
        return body

    def session(self, agent: str | None = None, **fields: Any) -> dict[str, Any]:
        agent = agent or self.agent()["id"]
        body: dict[str, Any] = self.ok(self.post("/v1/sessions", {"agent": agent, **fields}), 201)
        return body

    def view(self, session_id: str) -> dict[str, Any]:
        body: dict[str, Any] = self.ok(self.get(f"/v1/sessions/{session_id}"))
        return body

    def command(self, session_id: str, command: dict[str, Any]) -> httpx.Response:
        """A memory command with the session's current head and revision, sent again (as a
        client would) when a consolidation run landed between the read and the write (S12's
        409 naming the head or revision); any other answer is returned as it is."""
        for _ in range(10):
            current = self.view(session_id)["session"]
            answer = self.post(
                f"/v1/sessions/{session_id}/memory",
                {"expected": current["head"], "revision": current["revision"],
                 "command": command},
            )
            stale = answer.status_code == 409 and str(answer.json().get("message", "")).endswith(
                ("read the session again", "read it again"))
            if not stale:
                return answer
        return answer

    def remember(self, session_id: str, key: str, content: str, kind: str = "fact") -> Any:
        command = {"_tag": "Remember", "key": key, "content": content, "kind": kind}
        return self.ok(self.command(session_id, command))

    def turn(self, session_id: str, *items: dict[str, Any], **fields: Any) -> Any:
        return self.ok(
            self.post(f"/v1/sessions/{session_id}/turns", {"items": list(items), **fields}), 201
        )

    def wait_idle(self, session_id: str, timeout: float = 60) -> list[dict[str, Any]]:
        """Wait until no consolidation run of the session is queued or running; its runs."""
        deadline = time.monotonic() + timeout
        while True:
            runs: list[dict[str, Any]] = self.ok(self.get(f"/v1/sessions/{session_id}/runs"))[
                "runs"
            ]
            if all(run["status"] not in ("queued", "running") for run in runs):
                return runs
            if time.monotonic() > deadline:
                raise AssertionError(f"runs still pending: {runs}")
            time.sleep(0.05)

    def wait_learned(self, agent_id: str, timeout: float = 60) -> list[dict[str, Any]]:
        """Wait until no learning job of the agent is queued or running; its jobs."""
        deadline = time.monotonic() + timeout
        while True:
            jobs: list[dict[str, Any]] = self.ok(self.get(f"/v1/agents/{agent_id}/learning"))[
                "jobs"
            ]
            if all(job["status"] not in ("queued", "running") for job in jobs):
                return jobs
            if time.monotonic() > deadline:
                raise AssertionError(f"learning jobs still pending: {jobs}")
            time.sleep(0.05)

    def graphql(self, query: str, **variables: Any) -> Any:
        response = self.post("/graphql", {"query": query, "variables": variables})
        assert response.status_code == 200, response.text
        return response.json()


def flat(answer: Any) -> Any:
    """A GraphQL answer with each connection asked for its `nodes` alone (`{"nodes": [...]}`)
    replaced by that list: for tests about what the nodes hold. The pages themselves (edges,
    cursors, pageInfo) are tests/api/test_connections.py's."""
    if isinstance(answer, list):
        return [flat(value) for value in answer]
    if isinstance(answer, dict):
        if answer.keys() == {"nodes"}:
            return flat(answer["nodes"])
        return {key: flat(value) for key, value in answer.items()}
    return answer


def user(content: str, id: str | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "message", "role": "user", "content": content}
    if id is not None:
        item["id"] = id
    return item


def assistant(content: str) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "content": content}


class TokenMaker:
    """Tokens made as `openbot-memory token create` makes them, through one connection per
    Neo4j kept for the whole run: a connection and the schema cost about 0.35 s, the token
    itself about 20 ms, and most tests make one or more."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.dbs: dict[Target, Database] = {}

    def make(self, target: Target, org: str, person: str | None, service: str | None) -> str:
        return self.loop.run_until_complete(self._make(target, org, person, service))

    async def _make(
        self, target: Target, org: str, person: str | None, service: str | None
    ) -> str:
        db = self.dbs.get(target)
        if db is None:
            db = self.dbs[target] = await Database.connect(target)
            await db.apply_schema()
        return await Tokens(db, Settings().default_model).create(org, person, service)

    def close(self) -> None:
        for db in self.dbs.values():
            self.loop.run_until_complete(db.close())
        self.loop.close()


_token_maker = TokenMaker()


@pytest.fixture(scope="session", autouse=True)
def close_token_maker() -> Iterator[None]:
    yield
    _token_maker.close()


def make_token(target: Target, org: str, person: str | None, service: str | None = None) -> str:
    """A person's token, or with `service` an org's service token (acting for no person)."""
    return _token_maker.make(target, org, person, service)


@pytest.fixture
def tokens(neo4j_target: Target, graph: Graph) -> Callable[[str, str], str]:
    """Make a token for (org, person) in the clean graph of this test."""
    return lambda org, person: make_token(neo4j_target, org, person)


@pytest.fixture
def api(server: RunningServer, tokens: Callable[[str, str], str]) -> Iterator[Api]:
    """A client for person `ana` of org `acme`."""
    client = Api(server.url, tokens("acme", "ana"))
    yield client
    client.http.close()


@pytest.fixture
def member(server: RunningServer, tokens: Callable[[str, str], str]) -> Iterator[Api]:
    """A client for `ben`, another member of `acme` (ana's org)."""
    client = Api(server.url, tokens("acme", "ben"))
    yield client
    client.http.close()


@pytest.fixture
def platform(server: RunningServer, neo4j_target: Target, graph: Graph) -> Iterator[Api]:
    """A client with acme's service token: the platform itself, acting for no person."""
    client = Api(server.url, make_token(neo4j_target, "acme", None, service="platform"))
    yield client
    client.http.close()


@pytest.fixture
def other_org(server: RunningServer, tokens: Callable[[str, str], str]) -> Iterator[Api]:
    """A client for person `olaf` of another org, `globex`."""
    client = Api(server.url, tokens("globex", "olaf"))
    yield client
    client.http.close()
