"""Packaging: a wheel built from the repository and installed (not editable) into a clean venv
has every Cypher statement it runs: its `token create` and `serve` work from outside the
checkout. And the container files: a non-root image, a compose file that needs the password."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx

from app.store.database import Target
from tests.conftest import ROOT, Graph, free_port

SOURCES = ("app", "cypher", "pyproject.toml", "setup.py", "README.md")


def run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None,
        timeout: float = 300) -> str:
    answer = subprocess.run(
        [str(arg) for arg in args], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=timeout, check=False,
    )
    assert answer.returncode == 0, answer.stdout + answer.stderr
    return answer.stdout


def test_the_wheel_installed_in_a_clean_venv_serves(
    tmp_path: Path, neo4j_target: Target, graph: Graph
) -> None:
    source = tmp_path / "source"
    source.mkdir()
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(path, source / name)
    pip = [sys.executable, "-m", "pip"]
    run(*pip, "wheel", "--no-deps", "-q", "-w", tmp_path / "dist", ".", cwd=source)
    [wheel] = (tmp_path / "dist").glob("openbot_memory-*.whl")

    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", venv, cwd=tmp_path)
    run(venv / "bin" / "pip", "install", "-q", "-c", ROOT / "requirements.lock", wheel,
        cwd=tmp_path)
    # nothing of the checkout is in reach: another working folder, no PYTHONPATH
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    # (no warm-up rounds: they rehearse requests for seconds, which the warm-up's tests hold)
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "NEO4J_URI": neo4j_target.uri,
           "NEO4J_USER": neo4j_target.user, "NEO4J_PASSWORD": neo4j_target.password,
           "OPENBOT_MEMORY_WARMUP_ROUNDS": "0"}
    where = run(venv / "bin" / "python", "-c",
                "import app.store.catalog as c; print(c.CYPHER_DIR)", cwd=outside, env=env)
    assert where.strip().startswith(str(venv)), where
    assert run(venv / "bin" / "openbot-memory", "schema", cwd=outside, env=env) == (
        ROOT / "schema.graphql").read_text()

    cli = venv / "bin" / "openbot-memory"
    token = run(cli, "token", "create", "--org", "wheel", "--person", "ana", cwd=outside,
                env=env).strip()
    port = free_port()
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [cli, "serve", "--port", str(port)], cwd=outside, env=env,
            stdout=out, stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert server.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "the installed serve did not get ready"
            time.sleep(0.2)
        headers = {"Authorization": f"Bearer {token}"}
        made = httpx.post(f"http://127.0.0.1:{port}/v1/agents", json={"name": "from a wheel"},
                          headers=headers)
        assert made.status_code == 201, made.text
        listed = httpx.get(f"http://127.0.0.1:{port}/v1/agents", headers=headers)
        assert [agent["name"] for agent in listed.json()["agents"]] == ["from a wheel"]
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_the_image_runs_as_a_user_and_compose_needs_the_password() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    users = re.findall(r"(?m)^USER\s+(\S+)", dockerfile)
    assert users
    assert users[-1] not in ("root", "0"), users
    assert "pip install --no-cache-dir --no-deps ." in dockerfile  # not editable
    compose = (ROOT / "docker-compose.yml").read_text()
    uses = re.findall(r"\$\{NEO4J_PASSWORD[^}]*\}", compose)
    assert uses
    assert set(uses) == {"${NEO4J_PASSWORD:?set NEO4J_PASSWORD}"}, uses
    # /metrics answers a scrape from outside the container (Docker's bridge is no loopback)
    # only with the metrics token: compose passes it through from the environment
    assert "OPENBOT_MEMORY_METRICS_TOKEN: ${OPENBOT_MEMORY_METRICS_TOKEN:-}" in compose
