"""The first minute after start: the README walk-through run three times against a service
started on a fresh, cold Neo4j (its own state folder, emptied), timed from the moment
`/readyz` says ready. The goal: the first run takes at most 2x the third.

    .venv/bin/python -m bench.first_run                # as served (warm-up on)
    .venv/bin/python -m bench.first_run --no-warmup    # the same without the warm-up

With `NEO4J_URI` set, that Neo4j is used as it is (not cold)."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import httpx

from app.config import Settings
from app.store import local_server
from app.store.database import Target, resolve_target
from bench.common import ROOT, Served, settings_for, token

STATE = ROOT / ".openbot-memory-firstrun"
WALKTHROUGH = re.compile(r"<!-- readme-test: walkthrough -->\n```sh\n(.*?)```", re.DOTALL)
RUNS = 3
# Each curl of the walk-through notes its start, end and URL (its last argument) in $TIMES.
TIMED = """curl() {
  local started=$EPOCHREALTIME rc=0
  command curl "$@" || rc=$?
  echo "$started $EPOCHREALTIME ${*: -1}" >> "$TIMES"
  return $rc
}
"""


def cold_neo4j() -> Target:
    """A local Neo4j started now, on an empty data folder: a cold JVM, no plan cached."""
    if Settings().neo4j_uri:
        return resolve_target(Settings())
    settings = Settings(state_dir=STATE)
    local_server.stop(settings)
    shutil.rmtree(STATE / "neo4j" / "data", ignore_errors=True)
    server = local_server.start(settings)
    return Target(server.bolt_uri, server.user, server.password, "neo4j")


def wait_ready(url: str, seconds: float = 600) -> float:
    """Seconds until `/readyz` answers 200."""
    started = time.monotonic()
    while True:
        try:
            if httpx.get(f"{url}/readyz", timeout=30).status_code == 200:
                return time.monotonic() - started
        except httpx.HTTPError:
            pass
        if time.monotonic() - started > seconds:
            raise RuntimeError(f"{url} was not ready within {seconds:.0f} s")
        time.sleep(0.05)


def walkthrough(url: str, bearer: str) -> tuple[float, list[tuple[str, float]]]:
    """One run of the README's walk-through block, as its test runs it (bash, curl, jq):
    its seconds, and each request's (its route, ids left out, and its seconds)."""
    block = WALKTHROUGH.search((ROOT / "README.md").read_text())
    if block is None:
        raise RuntimeError("README.md has no walk-through block")
    with tempfile.TemporaryDirectory() as folder:
        times = Path(folder) / "times"
        times.touch()
        started = time.perf_counter()
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", TIMED + block.group(1)], cwd=ROOT,
            capture_output=True, text=True, check=False,
            env={**os.environ, "API": url, "OPENBOT_TOKEN": bearer, "TIMES": str(times)},
        )
        elapsed = time.perf_counter() - started
        requests = [route(line) for line in times.read_text().splitlines()]
    if done.returncode != 0 or '"retracted"' not in done.stdout:
        raise RuntimeError(f"the walk-through failed: {done.stdout[-1000:]} {done.stderr[-1000:]}")
    return elapsed, requests


def route(line: str) -> tuple[str, float]:
    """A line of $TIMES as (the URL's path with its ids as {id}, the seconds it took)."""
    start, end, url = line.split(" ", 2)
    path = re.sub(r"/[0-9a-f]{8}-[0-9a-f-]{27,}|/[A-Za-z0-9_-]{20,}", "/{id}",
                  url.split("//", 1)[-1].split("/", 1)[-1])
    return "/" + path, float(end) - float(start)


def main() -> None:
    parse = argparse.ArgumentParser(prog="bench.first_run", description=__doc__,
                                    formatter_class=argparse.RawTextHelpFormatter)
    parse.add_argument("--no-warmup", action="store_true", help="start without the warm-up")
    args = parse.parse_args()
    started = time.monotonic()
    target = cold_neo4j()
    neo4j_seconds = time.monotonic() - started
    served = Served(settings_for(target, warmup=not args.no_warmup), target, ready=False)
    try:
        ready = wait_ready(served.url)
        bearer = token(target, "firstrun", "ana")
        timed = [walkthrough(served.url, bearer) for _ in range(RUNS)]
    finally:
        served.stop()
        if not Settings().neo4j_uri:
            local_server.stop(Settings(state_dir=STATE))
    mode = "without warm-up" if args.no_warmup else "with warm-up"
    runs = [seconds for seconds, _ in timed]
    ratio = runs[0] / runs[-1]
    print(f"README walk-through on a fresh Neo4j, {mode}")
    print(f"  Neo4j started in {neo4j_seconds:.1f} s; the service ready (/readyz) "
          f"{ready:.1f} s after it answered /healthz")
    print("  runs: " + ", ".join(f"{n + 1}: {s:.2f} s" for n, s in enumerate(runs)))
    print(f"  first / third: {ratio:.2f}x (goal ≤ 2x: {'met' if ratio <= 2 else 'NOT met'})")
    print("  each request, seconds (" + ", ".join(f"run {n + 1}" for n in range(RUNS)) + "):")
    for n, (path, _) in enumerate(timed[0][1]):
        each = "  ".join(f"{requests[n][1]:6.2f}" for _, requests in timed)
        print(f"    {each}  {path}")


if __name__ == "__main__":
    main()
