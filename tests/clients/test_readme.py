"""The client README's walk-through, run as written with the installed client against the
service: it prints exactly the block documented after it."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from tests.conftest import ROOT, Graph, RunningServer

BLOCK = re.compile(
    r"<!-- readme-test: python-walkthrough -->\n```python\n(.*?)```\n\n```text\n(.*?)```",
    re.DOTALL,
)


def test_the_client_readme_walkthrough_prints_what_it_documents(
    server: RunningServer, ana_token: str, graph: Graph
) -> None:
    found = BLOCK.search((ROOT / "clients" / "python" / "README.md").read_text())
    assert found is not None, "the client README lost its walk-through"
    script, documented = found.groups()
    env = {**os.environ, "OPENBOT_MEMORY_URL": server.url, "OPENBOT_TOKEN": ana_token}
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == documented
