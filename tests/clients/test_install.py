"""`pip install ./clients/python` into a clean venv works: only the client's own dependencies
come with it (pinned by requirements.lock), and the installed client talks to the service from
outside the checkout."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT, Graph, RunningServer

SCRIPT = """
import openbot_memory_client as c
from openbot_memory_client import OpenBotMemory
print(c.__file__)
with OpenBotMemory() as client:
    agent = client.create_agent("from a clean venv")
    print(agent.name, [a.id for a in client.list_agents()] == [agent.id])
"""


def run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run([str(arg) for arg in args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_pip_install_into_a_clean_venv(
    tmp_path: Path, server: RunningServer, ana_token: str, graph: Graph
) -> None:
    source = tmp_path / "python"
    shutil.copytree(ROOT / "clients" / "python", source,
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"))
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", venv, cwd=tmp_path)
    pip: list[str | Path] = [venv / "bin" / "python", "-m", "pip"]
    run(*pip, "install", "-q", "--disable-pip-version-check", "-c", ROOT / "requirements.lock",
        source, cwd=tmp_path)
    run(*pip, "check", cwd=tmp_path)
    installed = {line.split("==")[0].lower() for line in run(
        *pip, "freeze", "--exclude-editable", cwd=tmp_path).split()}
    assert "openbot-memory-client" in installed
    assert not installed & {"neo4j", "starlette", "langgraph", "langchain-core"}

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path),
           "OPENBOT_MEMORY_URL": server.url, "OPENBOT_TOKEN": ana_token}
    out = run(venv / "bin" / "python", "-c", SCRIPT, cwd=outside, env=env).splitlines()
    assert out[0].startswith(str(venv))
    assert out[1] == "from a clean venv True"
