"""What the benchmarks share: a Neo4j, a served app, a client, and a printed table."""

from __future__ import annotations

import statistics
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from pydantic import SecretStr

from app.config import Settings
from app.store import local_server
from app.store.database import Target, resolve_target

ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def neo4j_target(apoc: bool = False) -> Iterator[Target]:
    """`NEO4J_URI` if set, else the project's local Neo4j under `.openbot-memory-bench` (with
    the APOC plugin when `apoc`: the @neo4j/graphql peer needs it)."""
    if Settings().neo4j_uri:  # NEO4J_URI and friends, read as the service reads them
        yield resolve_target(Settings())
        return
    settings = Settings(state_dir=ROOT / ".openbot-memory-bench", neo4j_apoc=apoc)
    already = local_server.status(settings) is not None
    server = local_server.start(settings)
    try:
        yield Target(server.bolt_uri, server.user, server.password, "neo4j")
    finally:
        if not already:
            local_server.stop(settings)


def settings_for(target: Target, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "neo4j_uri": target.uri,
        "neo4j_user": target.user,
        "neo4j_password": SecretStr(target.password),
        "worker_poll_seconds": 0.2,
    }
    values.update(overrides)
    return Settings.model_validate(values)


def percentile(samples: Sequence[float], q: float) -> float:
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def table(title: str, rows: Sequence[tuple[str, Sequence[float]]]) -> str:
    """Milliseconds per measure: n, p50, p95, max, mean."""
    lines = [
        title,
        f"{'measure':<38}{'n':>6}{'p50 ms':>10}{'p95 ms':>10}{'max ms':>10}{'mean ms':>10}",
    ]
    for name, samples in rows:
        lines.append(
            f"{name:<38}{len(samples):>6}{percentile(samples, 0.5):>10.1f}"
            f"{percentile(samples, 0.95):>10.1f}{max(samples):>10.1f}"
            f"{statistics.fmean(samples):>10.1f}"
        )
    return "\n".join(lines)


class Served:
    """The app served by a real uvicorn in a thread, on a free port."""

    def __init__(self, settings: Settings, target: Target) -> None:
        import socket
        import threading
        import time

        import uvicorn

        from app.api.app import create_app

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        self.app = create_app(settings, target)  # its state holds the service, once started
        self.server = uvicorn.Server(
            uvicorn.Config(self.app, host="127.0.0.1", port=port, log_level="warning")
        )
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        while not self.server.started:
            if not self.thread.is_alive():
                raise RuntimeError("the server did not start")
            time.sleep(0.02)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)


def token(target: Target, org: str, person: str) -> str:
    import asyncio

    from app.cli import _create_token

    return asyncio.run(_create_token(settings_for(target), org, person))


def progress(label: str, done: int, total: int) -> None:
    """A one-line progress bar on stderr."""
    import sys

    width = 30
    filled = width * done // max(total, 1)
    end = "\n" if done >= total else ""
    sys.stderr.write(f"\r{label:<24} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}{end}")
    sys.stderr.flush()
