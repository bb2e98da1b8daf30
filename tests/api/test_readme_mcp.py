"""The documentation's MCP transcript (docs/guides/search-and-mcp.md), run as written with the
SDK's own client against the service: it prints exactly the block documented after it (read,
remember, conflict, retry, search)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from tests.conftest import ROOT, Api, Graph, RunningServer
from tests.examples import name_of, where

BLOCK = re.compile(
    r"<!-- readme-test: mcp -->\n```python\n(.*?)```\n\n```text\n(.*?)```", re.DOTALL
)


def test_the_readme_mcp_transcript_runs_and_prints_what_it_documents(
    server: RunningServer, api: Api, graph: Graph
) -> None:
    [document] = where("mcp")
    found = BLOCK.search(document.read_text())
    assert found is not None, f"{name_of(document)} lost its MCP transcript"
    script, documented = found.groups()
    session = api.session()["session"]["id"]
    env = {**os.environ, "API": server.url, "OPENBOT_TOKEN": api.token, "SESSION": session}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == documented
    assert sorted(api.view(session)["memory"]["entries"]) == ["budget", "seat"]
