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


# Names statements of the catalog run as one (see `together`).
JOINED = "+"


@cache
def statement(name: str) -> LiteralString:
    """The text of `cypher/<name>.cypher`. Files are the project's own, never built from input.
    A name made by `together` is those files' statements as one."""
    if JOINED in name:
        parts = [f"CALL () {{\n{statement(part)}\n}}" for part in name.split(JOINED)]
        joined: LiteralString = "\n".join(parts) + "\nRETURN *"
        return joined
    # The file is part of the project, so its text is as literal as a string in the code.
    text: LiteralString = (CYPHER_DIR / f"{name}.cypher").read_text().strip()
    return without_comments(text)


def without_comments(text: LiteralString) -> LiteralString:
    """The statement as Neo4j is sent it: without its comment lines (`//` first on the line),
    which are for the reader of the file. Neo4j reads the whole text of every statement it is
    sent, comments too, before it finds the plan it cached, so a shorter text costs less on
    every call. A comment shares no line with Cypher, so no string is cut."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("//")]
    return "\n".join(lines)


def together(*names: str) -> str:
    """The name of `names`' statements run as one statement, one round trip: each in a `CALL`
    subquery of its own, in order, so each reads what those before it wrote (Cypher's clauses
    see the effects of the clauses before them), and the row has every part's columns (their
    names must differ). Each part runs once per row of the part before it: all but the last
    answer one row, or none when what they match is not there (then so does the whole)."""
    return JOINED.join(names)


def files_of(name: str) -> list[str]:
    """The statement files a name (of one file, or made by `together`) runs."""
    return name.split(JOINED)


def schema_statements() -> list[LiteralString]:
    """The constraints and indexes of `cypher/schema.cypher`, one statement each."""
    parts = statement("schema").split(";")
    return [part.strip() for part in parts if part.strip()]
