"""The catalog sends each file's Cypher to Neo4j, and none of its comments."""

from __future__ import annotations

import pytest

from app.store.catalog import CYPHER_DIR, statement, together

NAMES = sorted(path.stem for path in CYPHER_DIR.glob("*.cypher"))


@pytest.mark.parametrize("name", NAMES)
def test_a_statement_is_its_file_without_the_comment_lines(name: str) -> None:
    text = (CYPHER_DIR / f"{name}.cypher").read_text().strip()
    cypher = [line for line in text.splitlines() if not line.lstrip().startswith("//")]
    sent = statement(name)
    assert sent.splitlines() == cypher
    # a comment after Cypher on the same line would be sent: comments get lines of their own
    assert "//" not in sent


def test_statements_run_together_are_sent_without_comments() -> None:
    joined = statement(together("lock_session", "record_memory_edit", "session_views"))
    assert "//" not in joined
    assert joined.count("CALL () {") >= 3
    assert statement("session_views") in joined
