"""The @neo4j/graphql peer: installed from npm into bench/neograph/ and served by Apollo Server
(bench/neograph/server.mjs) on the same Neo4j as the service."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time

import httpx

from app.errors import SetupError
from app.store.database import Target
from bench.common import ROOT, end_process

NEOGRAPH = ROOT / "bench" / "neograph"
START_TIMEOUT_SECONDS = 60.0


def ensure_node() -> str:
    """Node 18+ on PATH; as root, apt-get installs it when missing, else the error says how."""
    node = shutil.which("node")
    if node is None and os.geteuid() == 0 and shutil.which("apt-get"):
        subprocess.run(["apt-get", "update", "-q"], check=True)
        subprocess.run(["apt-get", "install", "-y", "-q", "nodejs", "npm"], check=True)
        node = shutil.which("node")
    if node is None or shutil.which("npm") is None:
        raise SetupError(
            "the @neo4j/graphql peer needs Node.js 18+ and npm: install them (e.g. "
            "`sudo apt-get install nodejs npm`) or run bench/run with --no-peer"
        )
    return node


def install() -> None:
    """`npm ci` from the committed package-lock.json, when node_modules is older than it."""
    installed = NEOGRAPH / "node_modules" / ".package-lock.json"
    lock = NEOGRAPH / "package-lock.json"
    if installed.exists() and installed.stat().st_mtime >= lock.stat().st_mtime:
        return
    done = subprocess.run(
        ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=NEOGRAPH, capture_output=True, text=True, check=False,
    )
    if done.returncode != 0:
        raise SetupError(f"`npm ci` in {NEOGRAPH} failed:\n{done.stderr[-2000:]}")


def _free_port() -> int:
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port: int = sock.getsockname()[1]
        with socket.socket() as sock:  # server.mjs counts statements on port + 1
            try:
                sock.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
        return port


class Peer:
    """server.mjs running: `url` takes GraphQL, `statements()` counts its Cypher statements."""

    def __init__(self, target: Target) -> None:
        node = ensure_node()
        install()
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.log = NEOGRAPH / "server.log"
        environment = {
            "PATH": os.environ.get("PATH", ""), "NEO4J_URI": target.uri,
            "NEO4J_USER": target.user, "NEO4J_PASSWORD": target.password,
            "PORT": str(self.port), "NODE_ENV": "production",
        }
        with self.log.open("w") as out:
            self.process = subprocess.Popen(
                [node, "server.mjs"], cwd=NEOGRAPH, env=environment, stdout=out,
                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            )
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while "ready" not in self.log.read_text():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise SetupError(f"the @neo4j/graphql peer did not start:\n{self._tail()}")
            time.sleep(0.2)

    def _tail(self) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-20:])

    def statements(self) -> int:
        count: int = httpx.get(f"http://127.0.0.1:{self.port + 1}/").json()["statements"]
        return count

    def stop(self) -> None:
        end_process(self.process, 10)
