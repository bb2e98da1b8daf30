"""`schema.graphql` in the repo is the schema the code exports."""

from __future__ import annotations

from pathlib import Path

from app.api.graphql import export_schema

ROOT = Path(__file__).resolve().parents[2]


def test_checked_in_schema_is_current() -> None:
    checked_in = (ROOT / "schema.graphql").read_text()
    assert checked_in == export_schema(), (
        "schema.graphql is stale: run `openbot-memory schema > schema.graphql`"
    )
