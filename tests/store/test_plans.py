"""Plans that cannot drift: a statement that finds a session, an agent (or a change, run,
turn, version, learning job) by its id starts from that index seek, whatever the statistics
say, and never from the org (which would expand over every node of the org), nor from a
scan. Each is checked with EXPLAIN, without running it."""

from __future__ import annotations

import re
from typing import Any

import neo4j
import pytest

from app.store.catalog import CYPHER_DIR, statement
from tests.conftest import Graph

HINT = re.compile(r"^\s*USING INDEX (\w+):(\w+)\((\w+)\)", re.MULTILINE)
# (the entry's composite index is a second hint of lock_session and record_memory_edit)
HINTED = sorted(
    path.stem for path in CYPHER_DIR.glob("*.cypher")
    if any(label != "Entry" for _, label, _ in HINT.findall(path.read_text()))
)
SCANS = ("AllNodesScan", "NodeByLabelScan", "NodeIndexScan", "UnionNodeByLabelsScan")


def leaves(plan: Any) -> list[tuple[str, str]]:
    """The plan's leaves (operator, details): where its rows start."""
    children = plan.get("children") or []
    if not children:
        return [(plan["operatorType"].split("@")[0], plan["args"].get("Details", ""))]
    return [leaf for child in children for leaf in leaves(child)]


def test_the_statements_that_start_from_a_session_or_agent_are_hinted() -> None:
    for name in ("lock_session", "session_views", "lock_agent", "agent_entries",
                 "instruction_entries", "configure_session", "revision_heads"):
        assert name in HINTED


@pytest.mark.parametrize("name", HINTED)
def test_the_plan_starts_from_the_hinted_index_seek(
    name: str, graph: Graph, graph_driver: neo4j.Driver
) -> None:
    with graph_driver.session(database=graph.database) as session:
        plan = session.run(f"EXPLAIN {statement(name)}").consume().plan
    assert plan is not None
    starts = leaves(plan)
    for var, label, key in HINT.findall((CYPHER_DIR / f"{name}.cypher").read_text()):
        seek = f"{var}:{label}({key})"
        assert any("IndexSeek" in op and seek in details for op, details in starts), starts
    assert not [leaf for leaf in starts if leaf[0] in SCANS], starts
    assert not [leaf for leaf in starts if ":Org(id)" in leaf[1]], starts
