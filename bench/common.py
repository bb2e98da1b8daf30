"""What the benchmarks share: a Neo4j, a served app, a client, and a printed table."""

from __future__ import annotations

import dataclasses
import shutil
import statistics
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from pydantic import SecretStr

from app.config import Settings
from app.store import local_server
from app.store.database import Target, resolve_target

ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def neo4j_target(apoc: bool = False, fresh: bool = True) -> Iterator[Target]:
    """`NEO4J_URI` if set, else the project's local Neo4j under `.openbot-memory-bench` (with
    the APOC plugin when `apoc`: the @neo4j/graphql peer needs it). Unless not `fresh`, the
    local one starts from an empty graph (its data folder removed), so that a run measures what
    it loads and nothing an earlier run left."""
    if Settings().neo4j_uri:  # NEO4J_URI and friends, read as the service reads them
        yield resolve_target(Settings())
        return
    settings = Settings(state_dir=ROOT / ".openbot-memory-bench", neo4j_apoc=apoc)
    if fresh:
        local_server.stop(settings)
        shutil.rmtree(settings.state_dir / "neo4j" / "data", ignore_errors=True)
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
    """The app served by uvicorn in a process of its own, on a free port, as it is deployed:
    the benchmark's clients never share its interpreter (nor its GIL). What it counts is read
    from its `/metrics`. Unless not `ready`, it is waited for until `/readyz` says ready (the
    service warms up at start), so that no measure shares the machine with its warm-up."""

    def __init__(self, settings: Settings, target: Target, ready: bool = True) -> None:
        import json
        import os
        import socket
        import sys
        import time

        import httpx

        from bench.serve import SPEC

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        values = {
            name: value.get_secret_value() if isinstance(value, SecretStr) else value
            for name, value in settings.model_dump().items()
        }
        spec = {"settings": values, "target": dataclasses.asdict(target), "port": port}
        # Closed by `stop`, which the process outlives otherwise.
        self.log = tempfile.NamedTemporaryFile(prefix="bench-served-", suffix=".log")  # noqa: SIM115
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bench.serve"],
            cwd=ROOT,
            env={**os.environ, SPEC: json.dumps(spec, default=str)},
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 600  # a warm-up against a cold Neo4j on a busy machine
        probe = "/readyz" if ready else "/healthz"
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"the served app exited: {self._log_tail()}")
            try:
                if httpx.get(f"{self.url}{probe}", timeout=30).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the served app did not answer: {self._log_tail()}")
            time.sleep(0.1)

    def _log_tail(self) -> str:
        return Path(self.log.name).read_text(errors="replace")[-4000:]

    def metric(self, name: str, labels: dict[str, str] | None = None) -> float:
        """One sample of the app's `/metrics` (0 when it has none yet)."""
        import httpx
        from prometheus_client.parser import text_string_to_metric_families

        text = httpx.get(f"{self.url}/metrics", timeout=10).text
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                if sample.name == name and all(
                    sample.labels.get(k) == v for k, v in (labels or {}).items()
                ):
                    return float(sample.value)
        return 0.0

    def stop(self) -> None:
        end_process(self.process, 30)
        self.log.close()


def end_process(process: subprocess.Popen[bytes], seconds: float) -> None:
    """Stop a process the bench started: terminate, and kill it if it outlasts `seconds`."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def token(target: Target, org: str, person: str) -> str:
    import asyncio

    from app.cli import _create_token

    return asyncio.run(_create_token(settings_for(target), org, person))
