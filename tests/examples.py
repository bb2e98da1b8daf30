"""The runnable examples of the documentation: a fenced block right after a
`<!-- readme-test: NAME -->` line, in README.md or any page of docs/. Each name is run by a
test (`RUN`), wherever it is written; a name may be written in several documents (the
walk-through is in the README and in Getting started), and each copy runs."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import ROOT

MARKER = re.compile(r"<!-- readme-test: ([\w-]+) -->\n```(\w+)\n(.*?)```", re.DOTALL)

# Each marked name and the test that runs it.
RUN = {
    "walkthrough": "tests/api/test_readme_examples.py",
    "agent-memory": "tests/api/test_readme_examples.py",
    "learning": "tests/api/test_readme_examples.py",
    "mcp": "tests/api/test_readme_mcp.py",
}


def documents() -> list[Path]:
    """README.md and every page of the documentation site."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def marked(path: Path) -> dict[str, str]:
    """The marked blocks of one document, by name."""
    return {name: block for name, _, block in MARKER.findall(path.read_text())}


def where(name: str) -> list[Path]:
    """The documents that hold the marked block `name`."""
    return [path for path in documents() if name in marked(path)]


def name_of(path: Path) -> str:
    """A document's path from the repository root, for test ids."""
    return str(path.relative_to(ROOT))
