"""The Cypher catalog: every statement the service runs, one file each, loaded once."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import LiteralString, cast

CYPHER_DIR = Path(__file__).resolve().parents[2] / "cypher"


@cache
def statement(name: str) -> LiteralString:
    """The text of `cypher/<name>.cypher`. Files are the project's own, never built from input."""
    return cast(LiteralString, (CYPHER_DIR / f"{name}.cypher").read_text().strip())


def schema_statements() -> list[LiteralString]:
    """The constraints and indexes of `cypher/schema.cypher`, one statement each."""
    text = statement("schema")
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("//")]
    return [cast(LiteralString, part.strip()) for part in "\n".join(lines).split(";") if part.strip()]
