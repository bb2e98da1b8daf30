"""The documentation's walk-throughs (session memory, agent memory, learning), run as written
with bash, curl and jq against the service (S12-S14, A2, A5-A11), so the README and the pages
cannot drift.

A block is the ```sh fence after a `<!-- readme-test: NAME -->` line (tests/examples.py), in
README.md or a page of docs/. The blocks of one document run in one shell, in order, with `$API`
and `$OPENBOT_TOKEN` (acme's ana) set and the repository as the working directory (the blocks
call `.venv/bin/openbot-memory`). Every `jq -c` command's documented answer (the `# ...` lines
after it) must appear in the output, in order.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from app.store.database import Target
from tests.conftest import ROOT, Graph, RunningServer
from tests.examples import marked, name_of, where


def readme_blocks(document: Path) -> dict[str, str]:
    return marked(document)


def documented_answers(block: str) -> list[object]:
    """The answers documented under each `jq -c` command, parsed as JSON."""
    answers: list[object] = []
    lines = block.splitlines()
    for n, line in enumerate(lines):
        if "jq -c" not in line:
            continue
        comment: list[str] = []
        for follow in lines[n + 1 :]:
            if not follow.startswith("#"):
                break
            comment.append(follow.lstrip("#").strip())
        if comment:
            answers.append(json.loads(" ".join(comment)))
    return answers


def json_lines(output: str) -> list[object]:
    """Every line of the output that is JSON on its own (what `jq -c` printed)."""
    found: list[object] = []
    for line in output.splitlines():
        for start in range(len(line)):  # a curl answer without a newline may come first
            if line[start] not in "[{\"":
                continue
            try:
                found.append(json.loads(line[start:]))
                break
            except json.JSONDecodeError:
                continue
    return found


def run_blocks(
    document: Path, names: list[str], server: RunningServer, neo4j_target: Target, token: str
) -> list[object]:
    """Run a document's blocks in one shell; the JSON lines printed, checked against the
    documented answers in order."""
    missing = [tool for tool in ("bash", "curl", "jq") if shutil.which(tool) is None]
    assert not missing, f"the documentation's examples need {missing}: apt-get install -y curl jq"
    blocks = readme_blocks(document)
    assert set(names) <= set(blocks), f"{name_of(document)} lost a tested block"
    script = "set -euo pipefail\n" + "".join(blocks[name] for name in names)
    env = {
        **os.environ,
        "API": server.url,
        "OPENBOT_TOKEN": token,
        "NEO4J_URI": neo4j_target.uri,
        "NEO4J_USER": neo4j_target.user,
        "NEO4J_PASSWORD": neo4j_target.password,
    }
    done = subprocess.run(
        ["bash", "-c", script], cwd=Path(ROOT), env=env, capture_output=True, text=True,
        timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    printed = json_lines(done.stdout)
    expected = [answer for name in names for answer in documented_answers(blocks[name])]
    position = 0
    for answer in expected:  # in order, each documented answer is printed
        assert answer in printed[position:], (answer, printed)
        position = printed.index(answer, position) + 1
    return expected


WALKTHROUGHS = where("walkthrough")
AGENT_BLOCKS = where("agent-memory")


def test_the_walkthrough_is_in_the_readme_and_getting_started() -> None:
    assert [name_of(path) for path in WALKTHROUGHS] == ["README.md", "docs/getting-started.md"]
    assert len(AGENT_BLOCKS) == 1
    assert "learning" in marked(AGENT_BLOCKS[0])


@pytest.mark.parametrize("document", WALKTHROUGHS, ids=name_of)
def test_the_session_walkthrough_runs_as_written(
    document: Path, server: RunningServer, neo4j_target: Target, graph: Graph,
    tokens: Callable[[str, str], str],
) -> None:
    # S12-S14, and ?wait: no sleep is needed before the memory is read
    assert len(run_blocks(
        document, ["walkthrough"], server, neo4j_target, tokens("acme", "ana")
    )) >= 4
    assert graph.value("MATCH (c:Change {maker: 'person', op: 'forget'}) RETURN count(c)") == 1


def test_the_agent_blocks_run_as_written_and_answer_as_documented(
    server: RunningServer, neo4j_target: Target, graph: Graph,
    tokens: Callable[[str, str], str],
) -> None:
    # A2, A5-A11
    answers = run_blocks(
        AGENT_BLOCKS[0], ["agent-memory", "learning"], server, neo4j_target, tokens("acme", "ana")
    )
    assert len(answers) >= 6
    # the two Remembers of the first block, made by ana (the stale Forget wrote nothing)
    assert graph.value("MATCH (c:AgentChange {maker: 'person'}) RETURN count(c)") == 2


@pytest.mark.parametrize(
    ("name", "document"),
    [(name, path) for name in ("walkthrough", "agent-memory", "learning") for path in where(name)],
    ids=lambda value: name_of(value) if isinstance(value, Path) else str(value),
)
def test_each_tested_block_documents_its_answers(name: str, document: Path) -> None:
    assert documented_answers(readme_blocks(document)[name])
