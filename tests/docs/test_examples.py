"""The documentation's examples: every marked block is run by a test, every GraphQL block is a
valid document of the schema, and no page narrates past work."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from graphql import build_schema, parse, validate

from tests.conftest import ROOT
from tests.examples import RUN, documents, marked, name_of, where

GRAPHQL = re.compile(r"```graphql\n(.*?)```", re.DOTALL)
# What a manual does not say: the work's history (issue and stop numbers).
HISTORY = re.compile(r"\b(issue|stop|session) [0-9]+", re.IGNORECASE)


def test_every_marked_example_is_one_a_test_runs() -> None:
    names = {name for path in documents() for name in marked(path)}
    assert names == set(RUN), "a marked block without a test that runs it, or a test's lost"
    for name, test in RUN.items():
        assert where(name), name
        assert f'"{name}"' in (ROOT / test).read_text(), (name, test)


def graphql_blocks() -> list[tuple[str, str]]:
    blocks = []
    for path in documents():
        for n, block in enumerate(GRAPHQL.findall(path.read_text())):
            blocks.append((f"{name_of(path)}#{n}", block))
    return blocks


BLOCKS = graphql_blocks()


@pytest.mark.parametrize(("place", "block"), BLOCKS, ids=[place for place, _ in BLOCKS])
def test_every_graphql_example_is_valid_against_the_schema(place: str, block: str) -> None:
    schema = build_schema((ROOT / "schema.graphql").read_text())
    errors = validate(schema, parse(block))
    assert not errors, (place, [error.message for error in errors])


@pytest.mark.parametrize("path", documents(), ids=name_of)
def test_no_page_narrates_past_work(path: Path) -> None:
    found = [line for line in path.read_text().splitlines() if HISTORY.search(line)]
    assert not found, found
