"""The local Neo4j gets only the environment it needs: a planted key, a Neo4j password and a
variable of our own are not in the server's `/proc/<pid>/environ`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.config import Settings
from app.store import local_server

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


def test_the_local_neo4j_sees_only_what_it_needs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in PLANTED.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    settings = Settings(state_dir=tmp_path / "state")
    server = local_server.start(settings)
    try:
        seen = environ_of(server.pid)
        raw = Path(f"/proc/{server.pid}/environ").read_bytes()
    finally:
        local_server.stop(settings)
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
