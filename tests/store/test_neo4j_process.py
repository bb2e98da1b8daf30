"""The local Neo4j as a process, on a Neo4j of this module's own (the run's is never killed):
it gets only the environment it needs (a planted key, a Neo4j password and a variable of our
own are not in its `/proc/<pid>/environ`), and a `kill -9` of it under 20 concurrent writers
is answered with 503s, recovered from without a restart of the service, and loses no
acknowledged write."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from app.config import Settings
from app.store import local_server
from app.store.database import Target
from tests.conftest import RunningServer, make_token
from tests.conftest import test_settings as settings_for
from tests.openai_stub import OpenAIStub

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("NEO4J_URI")), reason="an outside Neo4j: the local one is not in use"
)

PLANTED = {
    "OPENAI_API_KEY": "sk-planted7f3a9c1e5b2d4f6a8c0e",
    "NEO4J_PASSWORD": "planted-neo4j-password-7731",
    "OPENBOT_MEMORY_METRICS_TOKEN": "planted-metrics-token-4409",
    "AWS_SECRET_ACCESS_KEY": "planted-aws-secret-5521",
}


def environ_of(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes()
    pairs = (entry.decode(errors="replace").partition("=") for entry in raw.split(b"\0") if entry)
    return {name: value for name, _, value in pairs}


@dataclass
class OwnNeo4j:
    settings: Settings
    server: local_server.LocalServer
    environ: dict[str, str]
    raw_environ: bytes

    @property
    def target(self) -> Target:
        return Target(self.server.bolt_uri, self.server.user, self.server.password, "neo4j")


@pytest.fixture(scope="module")
def own_neo4j(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OwnNeo4j]:
    """A Neo4j of this module, started with secrets planted in the environment."""
    saved = {name: os.environ.get(name) for name in (*PLANTED, "LC_ALL")}
    os.environ.update({**PLANTED, "LC_ALL": "C.UTF-8"})
    settings = Settings(state_dir=tmp_path_factory.mktemp("own-neo4j") / "state")
    try:
        server = local_server.start(settings)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    raw = Path(f"/proc/{server.pid}/environ").read_bytes()
    yield OwnNeo4j(settings, server, environ_of(server.pid), raw)
    local_server.stop(settings)


def test_the_local_neo4j_sees_only_what_it_needs(own_neo4j: OwnNeo4j) -> None:
    seen, raw = own_neo4j.environ, own_neo4j.raw_environ
    for name, value in PLANTED.items():
        assert name not in seen
        assert value.encode() not in raw
    assert seen["PATH"] == os.environ["PATH"]
    assert seen["LC_ALL"] == "C.UTF-8"
    allowed = local_server.SERVER_ENVIRONMENT
    assert all(name in allowed or name.startswith("LC_") for name in seen), sorted(seen)


def test_server_environment_keeps_the_allowed_names_only() -> None:
    environ = {"PATH": "/bin", "JAVA_HOME": "/jdk", "HOME": "/root", "LANG": "C", "LC_CTYPE": "C",
               "OPENAI_API_KEY": "sk-x", "NEO4J_URI": "bolt://x", "OPENBOT_MEMORY_X": "y"}
    assert local_server.server_environment(environ) == {
        "PATH": "/bin", "JAVA_HOME": "/jdk", "HOME": "/root", "LANG": "C", "LC_CTYPE": "C"}


# --- kill -9 under load ---------------------------------------------------------------

WRITERS = 20
SLOW_ANSWER = 10.0  # an answer slower than this, while Neo4j is down, is a hang
Status = tuple[float, int, float, str | None]  # started, status, seconds, Retry-After


@dataclass
class Writer:
    """One writer: Remember commands on its own session, each with a key of its own."""

    session: str
    acked: dict[str, int] = field(default_factory=dict)  # key -> revision answered
    statuses: list[Status] = field(default_factory=list)
    hangs: list[str] = field(default_factory=list)
    attempts: int = 0

    def _call(self, http: httpx.Client, method: str, path: str, **kw: object) -> httpx.Response:
        started = time.monotonic()
        answer = http.request(method, path, **kw)  # type: ignore[arg-type]
        self.statuses.append((started, answer.status_code, time.monotonic() - started,
                              answer.headers.get("retry-after")))
        return answer

    def run(self, http: httpx.Client, stop: threading.Event, n: int) -> None:
        while not stop.is_set():
            started = time.monotonic()
            try:
                view = self._call(http, "GET", f"/v1/sessions/{self.session}")
                if view.status_code != 200:
                    time.sleep(0.2)
                    continue
                current = view.json()["session"]
                self.attempts += 1
                key = f"w{n}-{self.attempts}"
                command = {"_tag": "Remember", "key": key, "content": f"Write {key}.",
                           "kind": "fact"}
                answer = self._call(http, "POST", f"/v1/sessions/{self.session}/memory", json={
                    "expected": current["head"], "revision": current["revision"],
                    "command": command})
                if answer.status_code == 200:
                    self.acked[key] = answer.json()["session"]["revision"]
                elif answer.status_code != 409:
                    time.sleep(0.2)
            except httpx.TimeoutException:
                self.hangs.append(f"no answer within {SLOW_ANSWER + 30}s (a call of the GET and "
                                  f"Remember begun at {started:.1f})")
            except httpx.TransportError as exc:
                self.hangs.append(repr(exc))
                time.sleep(0.2)


def test_kill_9_of_neo4j_under_20_writers(own_neo4j: OwnNeo4j, openai_stub: OpenAIStub) -> None:
    target = own_neo4j.target
    service = RunningServer(settings_for(openai_stub, target), target)
    headers = {"Authorization": f"Bearer {make_token(target, 'acme', 'ana')}"}
    clients = [httpx.Client(base_url=service.url, headers=headers, timeout=SLOW_ANSWER + 30)
               for _ in range(WRITERS)]
    stop = threading.Event()
    try:
        agent = clients[0].post("/v1/agents", json={"name": "a"}).json()["id"]
        writers = [
            Writer(clients[0].post("/v1/sessions", json={"agent": agent}).json()["session"]["id"])
            for _ in range(WRITERS)
        ]
        threads = [threading.Thread(target=w.run, args=(c, stop, n), daemon=True)
                   for n, (w, c) in enumerate(zip(writers, clients, strict=True))]
        for thread in threads:
            thread.start()
        # a wait for progress, not a timing: on a loaded machine getting going can take a while
        deadline = time.monotonic() + 120
        while sum(len(w.acked) for w in writers) < 100 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sum(len(w.acked) for w in writers) >= 100, "the writers did not get going"

        pid = own_neo4j.server.pid
        os.kill(pid, signal.SIGKILL)
        killed = time.monotonic()
        os.waitpid(pid, 0)  # our child: reap it, so it is not taken for alive
        time.sleep(3)  # the writers meet a database that is gone
        restarting = time.monotonic()
        restarted = local_server.start(own_neo4j.settings)
        back = time.monotonic()
        own_neo4j.server = restarted
        assert restarted.bolt_uri == target.uri  # the service's URI still holds

        # the service recovers by itself: every writer gets writes through again
        counts = [len(w.acked) for w in writers]

        def recovered() -> bool:
            return all(len(w.acked) >= c + 3 for w, c in zip(writers, counts, strict=True))

        # a wait for progress: the first statements after a restart are planned by a cold JVM
        # (seen: 13 s each, twice, with the machine loaded; 35-46 s until every writer had 3)
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and not recovered():
            time.sleep(0.1)
        recovering = time.monotonic() - back
        stop.set()
        for thread in threads:
            thread.join(timeout=SLOW_ANSWER + 10)
        since = [(len(w.acked) - c, Counter(s[1] for s in w.statuses if s[0] >= back))
                 for w, c in zip(writers, counts, strict=True)]
        assert recovered(), f"the service did not recover by itself: per writer, writes " \
            f"acknowledged and statuses since Neo4j was back {since}, hangs " \
            f"{[h for w in writers for h in w.hangs][:5]}"

        # while Neo4j was down: 503 Unavailable with Retry-After, each within seconds
        down = [s for w in writers for s in w.statuses if killed <= s[0] < restarting]
        assert any(status == 503 for _, status, _, _ in down), down[:20]
        for _, status, seconds, retry_after in down:
            assert status in (200, 409, 503), status  # 200: answered before the kill hit it
            assert seconds < SLOW_ANSWER, seconds
            if status == 503:
                assert retry_after is not None
        # while it starts again (Bolt answers before the database does), a request that cannot
        # be served yet answers within seconds: 503, not a wait for the start. One the database
        # already serves may be slow (a cold JVM plans its first statements, seen: 13 s on a
        # loaded machine); it still answers, which the check of hangs below holds.
        starting = [s for w in writers for s in w.statuses if restarting <= s[0] < back]
        assert all(status in (200, 409, 503) for _, status, _, _ in starting), starting
        unavailable = [s for s in starting if s[1] == 503]
        assert all(seconds < SLOW_ANSWER for _, _, seconds, _ in unavailable), \
            [s for s in unavailable if s[2] >= SLOW_ANSWER]
        assert all(status < 500 or status == 503 for w in writers for _, status, _, _ in w.statuses)
        assert [h for w in writers for h in w.hangs if "no answer" in h] == [], \
            f"killed at {killed:.1f}, restarted at {restarting:.1f}, back at {back:.1f}"

        # every acknowledged write is there, and each session's revisions have no gap: the
        # revision counts exactly the writes that committed, acknowledged or not
        checker = clients[0]
        found = 0
        for writer in writers:
            view = checker.get(f"/v1/sessions/{writer.session}").json()
            entries = view["memory"]["entries"]
            assert set(writer.acked) <= set(entries)
            found += len(set(writer.acked) & set(entries))
            assert view["session"]["revision"] == len(entries)
            revisions = sorted(writer.acked.values())
            assert len(set(revisions)) == len(revisions)  # no revision answered twice
            assert all(0 < r <= len(entries) for r in revisions)
        acked = sum(len(w.acked) for w in writers)
        assert found == acked
        print(f"kill -9 under {WRITERS} writers: {acked} writes acknowledged, {found} found; "
              f"{sum(s[1] == 503 for s in down)} answers 503 while down, the slowest in "
              f"{max(s[2] for s in down):.1f}s; Neo4j started again in {back - restarting:.1f}s, "
              f"the slowest answer while it started in "
              f"{max((s[2] for s in starting), default=0):.1f}s; every writer had 3 writes "
              f"through {recovering:.1f}s after it was back")
    finally:
        stop.set()
        for client in clients:
            client.close()
        service.stop()
