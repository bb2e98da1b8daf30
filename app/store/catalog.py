"""The Cypher catalog: every statement the service runs, one file each, loaded once."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import LiteralString

# A checkout has the statements at the top (`cypher/`); a built wheel carries a copy of them in
# the package (`app/store/cypher/`, copied by setup.py's build step). The checkout's win.
SOURCE_DIR = Path(__file__).resolve().parents[2] / "cypher"
PACKAGED_DIR = Path(__file__).resolve().parent / "cypher"
CYPHER_DIR = SOURCE_DIR if (SOURCE_DIR / "schema.cypher").exists() else PACKAGED_DIR


@cache
def statement(name: str) -> LiteralString:
    """The text of `cypher/<name>.cypher`. Files are the project's own, never built from input."""
    # The file is part of the project, so its text is as literal as a string in the code.
    text: LiteralString = (CYPHER_DIR / f"{name}.cypher").read_text().strip()
    return text


def schema_statements() -> list[LiteralString]:
    """The constraints and indexes of `cypher/schema.cypher`, one statement each."""
    text = statement("schema")
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("//")]
    parts = "\n".join(lines).split(";")
    return [part.strip() for part in parts if part.strip()]
