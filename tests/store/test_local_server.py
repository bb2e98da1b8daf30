"""The project's own Neo4j: start, reuse, stop with no Java left; `serve` reuses it and a
`kill -9` of the service leaves the data intact."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import neo4j
import pytest

from app.config import Settings
from app.store import local_server
from app.store.catalog import statement
from app.store.database import Target
from tests.conftest import ROOT, free_port, neo4j_state_dir

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("NEO4J_URI")), reason="an outside Neo4j: the local one is not in use"
)


def java_pids(home: Path) -> list[int]:
    """Live processes whose command line names this Neo4j home (zombies have none)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"--home-dir={home}".encode() in argv:
            found.append(int(proc.name))
    return found


def test_two_starters_at_once_share_one_server_start_reuses_and_stop_leaves_no_java(
    tmp_path: Path,
) -> None:
    """`token create` while `serve` is still starting Neo4j: one JVM, both use it. A start
    afterwards reuses it too, and a stop leaves no Java process (one server for the three,
    since each start of a JVM costs the run half a minute)."""
    settings = Settings(state_dir=tmp_path / "state")
    barrier = threading.Barrier(2)
    started: list[local_server.LocalServer] = []
    failed: list[BaseException] = []

    def starter() -> None:
        barrier.wait()
        try:
            started.append(local_server.start(Settings(state_dir=tmp_path / "state")))
        except BaseException as exc:  # reported below, in the test's thread
            failed.append(exc)

    threads = [threading.Thread(target=starter) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=2 * local_server.START_TIMEOUT_SECONDS + 30)
    home = (tmp_path / "state").resolve() / "neo4j"
    try:
        assert failed == []
        assert len(started) == 2
        assert started[0].pid == started[1].pid
        assert java_pids(home) == [started[0].pid]
        assert local_server.status(settings) == started[0]

        first = started[0]
        again = local_server.start(settings)
        assert again.pid == first.pid
        assert local_server.status(settings) == first
        assert java_pids(Path(first.home)) == [first.pid]
        browser = httpx.get(first.browser_url, timeout=10)
        assert browser.status_code == 200
        assert "Neo4j Browser" in browser.text or "<html" in browser.text.lower()
    finally:
        stopped = local_server.stop(settings)
        left = java_pids(home)
        for pid in left:  # an orphaned second server must not outlive the test
            os.kill(pid, signal.SIGKILL)
    assert stopped is True
    assert left == []
    assert local_server.status(settings) is None
    assert local_server.stop(settings) is False


def test_serve_reuses_the_local_neo4j_and_survives_kill_9(
    neo4j_target: Target, local_neo4j: local_server.LocalServer
) -> None:
    state = str(neo4j_state_dir())
    settings = Settings(state_dir=Path(state))
    running = local_server.status(settings)
    assert running is not None  # the test run's Neo4j (tests/conftest.py)
    assert running.bolt_uri == neo4j_target.uri
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEO4J_")}
    env["OPENBOT_MEMORY_STATE_DIR"] = state

    def serve() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [sys.executable, "-m", "app", "serve", "--port", str(port)],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )

    def ready() -> httpx.Response:
        """`/readyz` once it says ready (503 while the service warms up), or the last answer."""
        deadline = time.monotonic() + 120
        while True:
            try:
                answer = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=5)
                if answer.status_code == 200 or time.monotonic() > deadline:
                    return answer
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise
            time.sleep(0.2)

    token = subprocess.run(
        [sys.executable, "-m", "app", "token", "create", "--org", "kill9", "--person", "ana"],
        cwd=ROOT, env=env, capture_output=True, text=True, check=True,
    ).stdout.strip()
    first = serve()
    try:
        assert ready().status_code == 200
        headers = {"Authorization": f"Bearer {token}"}
        agent = httpx.post(f"http://127.0.0.1:{port}/v1/agents", json={"name": "a"},
                           headers=headers).json()["id"]
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait()
    assert local_server.status(settings) == running  # Neo4j lives on
    second = serve()
    try:
        assert ready().status_code == 200
        answer = httpx.get(f"http://127.0.0.1:{port}/v1/agents/{agent}", headers=headers)
        assert answer.status_code == 200
        assert answer.json()["name"] == "a"
        assert local_server.status(settings) == running  # reused, not started again
    finally:
        second.send_signal(signal.SIGTERM)
        second.wait(timeout=30)


def test_starters_of_two_state_folders_at_once_each_get_their_own_server_and_apoc_if_asked(
    tmp_path: Path,
) -> None:
    """Two test workers start their Neo4j at once: each must get ports of its own. Both
    folders last ran on the same free ports (a stopped server's state), so each prefers them;
    without one chooser at a time, both took them and one's login failed. The first asks for
    APOC (OPENBOT_MEMORY_NEO4J_APOC): the plugin is fetched, put in plugins/ and answers."""
    bolt, http = free_port(), free_port()
    folders = [Settings(state_dir=tmp_path / "one", neo4j_apoc=True),
               Settings(state_dir=tmp_path / "two")]
    for n, settings in enumerate(folders):
        ended = subprocess.Popen(["true"])
        ended.wait()  # the stopped server's pid: no longer running
        home = settings.state_dir.resolve() / "neo4j"
        local_server._write_state(settings, local_server.LocalServer(
            pid=ended.pid, bolt_port=bolt, http_port=http, user="neo4j",
            password=f"last-password-{n}", home=str(home)))
    barrier = threading.Barrier(2)
    started: dict[int, local_server.LocalServer] = {}
    failed: list[BaseException] = []

    def starter(n: int) -> None:
        barrier.wait()
        try:
            started[n] = local_server.start(folders[n])
        except BaseException as exc:  # reported below, in the test's thread
            failed.append(exc)

    threads = [threading.Thread(target=starter, args=(n,)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=2 * local_server.START_TIMEOUT_SECONDS + 30)
    try:
        assert failed == []
        assert sorted(started) == [0, 1]
        one, two = started[0], started[1]
        assert one.pid != two.pid
        assert {one.bolt_port, one.http_port}.isdisjoint({two.bolt_port, two.http_port})
        for n, server in started.items():
            assert server.password == f"last-password-{n}"  # each folder keeps its login
            with neo4j.GraphDatabase.driver(
                server.bolt_uri, auth=(server.user, server.password)
            ) as driver:
                driver.verify_connectivity()
        assert [p.name for p in (Path(one.home) / "plugins").iterdir()] == [
            "apoc-core-5.26.0-core.jar"
        ]
        with neo4j.GraphDatabase.driver(one.bolt_uri, auth=(one.user, one.password)) as driver:
            records, _, _ = driver.execute_query(statement("bench_apoc_version"))
        assert records[0]["version"] == "5.26.0"
        assert list((Path(two.home) / "plugins").iterdir()) == []  # no plugin unasked
    finally:
        stopped = [local_server.stop(settings) for settings in folders]
    assert stopped == [True, True]
    assert all(java_pids(Path(server.home)) == [] for server in started.values())
