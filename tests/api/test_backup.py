"""Backup and restore of one org: export a rich org, import it under a new name (in an empty
database, since ids are kept), and every view and provenance query answers the same."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from app.store.backup import FORMAT, import_org
from app.store.database import Database, Target
from tests.conftest import Api, Graph, RunningServer, assistant, flat, make_token, user
from tests.test_cli import run_cli

STORY = """query Story($id: ID!) { session(id: $id) {
  id kind head revision
  memory { entries { nodes { key content kind status updatedAt
    sources { id content turn { id model session { id } } }
    changes { nodes { op maker madeBy before: beforeContent content at run { model read } } } } } }
  runs { nodes { status error read dropped { key reason } changes { key content } } }
  versions { nodes { id cause current } }
  agent { name sessions { nodes { id } } } } }"""
AGENT = """query Agent($id: ID!) { agent(id: $id) { memory { version
  entries { nodes { key content kind status about visibility updatedAt
            sources { session { id } item { id content turn { id } } }
            changes { nodes { version maker person before content at job { id model } } } } }
  log(first: 50) { nodes { version maker person keys at } } } } }"""


def wait_idle(graph: Graph) -> None:
    deadline = time.monotonic() + 30
    while graph.value("MATCH (r) WHERE (r:Run OR r:LearningJob) AND r.status IN "
                      "['queued', 'running'] RETURN count(r)") and time.monotonic() < deadline:
        time.sleep(0.1)


def build_rich_org(ana: Api, ben: Api) -> None:
    agent = ana.agent("travel desk", shared=True)["id"]
    first = ana.session(agent)["session"]["id"]
    ana.turn(first, user("Hi, my name is Ana. Our budget is 1500 EUR. I prefer window seats. "
                         "Always book trains before flights."), assistant("Noted."))
    ana.wait_idle(first)
    start = ana.view(first)["session"]["head"]
    ana.remember(first, "hotel", "The hotel is near the station.")
    ana.ok(ana.command(first, {"_tag": "Forget", "key": "budget"}))
    fork = ana.ok(ana.post(f"/v1/sessions/{first}/fork", {}), 201)["session"]["id"]
    ana.remember(fork, "train", "The train leaves at 9.")
    current = ana.view(first)["session"]
    ana.ok(ana.post(f"/v1/sessions/{first}/revert", {
        "expected": current["head"], "revision": current["revision"], "to": start}))
    ana.ok(ana.post(f"/v1/agents/{agent}/memory", {"expected": ana.ok(
        ana.get(f"/v1/agents/{agent}/memory"))["version"], "command": {
        "_tag": "Remember", "key": "seat", "content": "Ana prefers aisle seats.",
        "kind": "preference", "about": "ana", "visibility": "private"}}))
    sub = ana.session(agent, kind="subagent", parent=first)["session"]["id"]
    ana.remember(sub, "refunds", "Book refundable fares only.", kind="procedure")
    ana.ok(ana.post(f"/v1/sessions/{sub}/promote", {"name": "refund desk"}), 201)
    other = ben.session(agent)["session"]["id"]
    ben.turn(other, user("I decided to fly on Monday."), assistant("Fine."))
    ben.wait_idle(other)


def views(client: Api) -> dict[str, Any]:
    """Every REST view and GraphQL provenance query of the org, as the platform sees it."""
    seen: dict[str, Any] = {"settings": client.ok(client.get("/v1/org/settings"))}
    agents = client.ok(client.get("/v1/agents"))["agents"]
    seen["agents"] = agents
    for agent in agents:
        a = agent["id"]
        for path in ("", "/memory", "/memory/log", "/learning"):
            seen[f"agent {a}{path}"] = client.ok(client.get(f"/v1/agents/{a}{path}"))
        seen[f"graphql agent {a}"] = flat(client.graphql(AGENT, id=a))
    sessions = client.ok(client.get("/v1/sessions"))["sessions"]
    seen["sessions"] = sessions
    for view in sessions:
        s = view["session"]["id"]
        for path in ("", "/memory", "/runs", "/versions", "/instructions"):
            seen[f"session {s}{path}"] = client.ok(client.get(f"/v1/sessions/{s}{path}"))
        for version in seen[f"session {s}/versions"]["versions"]:
            v = version["id"]
            seen[f"version {v}"] = client.ok(client.get(f"/v1/sessions/{s}/versions/{v}"))
        seen[f"graphql session {s}"] = flat(client.graphql(STORY, id=s))
    assert len(sessions) >= 4
    return seen


def counts(graph: Graph) -> tuple[int, int]:
    nodes = graph.value("MATCH (n) WHERE NOT n:Token RETURN count(n)")
    rels = graph.value("MATCH ()-[r]->() WHERE type(r) <> 'GRANTS' RETURN count(r)")
    return int(nodes), int(rels)


def env(target: Target) -> dict[str, str]:
    return {"NEO4J_URI": target.uri, "NEO4J_USER": target.user,
            "NEO4J_PASSWORD": target.password}


def test_an_org_round_trips_through_export_and_an_interrupted_import(
    server: RunningServer, neo4j_target: Target, graph: Graph, tmp_path: Path
) -> None:
    ana = Api(server.url, make_token(neo4j_target, "acme", "ana"))
    ben = Api(server.url, make_token(neo4j_target, "acme", "ben"))
    platform = Api(server.url, make_token(neo4j_target, "acme", None, service="platform"))
    build_rich_org(ana, ben)
    wait_idle(graph)
    before = views(platform)
    before_ana = flat(ana.graphql(AGENT, id=before["agents"][0]["id"]))
    in_graph = counts(graph)

    out = tmp_path / "acme.jsonl"
    exported = run_cli("export", "--org", "acme", "--out", str(out), env=env(neo4j_target))
    assert exported.returncode == 0, exported.stderr
    lines = out.read_text().splitlines()
    header = json.loads(lines[0])
    assert header["format"] == FORMAT
    assert header["version"] == 1
    assert header["org"] == "acme"
    assert (header["nodes"], header["relationships"]) == in_graph  # all of it, tokens aside
    assert len(lines) == 1 + sum(in_graph)
    text = out.read_text()
    for token in (ana.token, ben.token, platform.token):
        assert token not in text
    assert '"Token"' not in text
    assert '"GRANTS"' not in text

    graph.rows("MATCH (n) DETACH DELETE n")  # ids are kept: they need an empty database

    async def interrupted() -> None:
        db = await Database.connect(neo4j_target)
        applied = 0

        def advance(n: int) -> None:
            nonlocal applied
            applied += n
            if applied >= 60:
                raise KeyboardInterrupt

        try:
            await import_org(db, out, "acme2", advance, batch=7)
        finally:
            await db.close()

    with pytest.raises(KeyboardInterrupt):
        asyncio.run(interrupted())
    assert graph.value("MATCH (i:Import {org: 'acme2'}) RETURN i.lines") >= 60
    assert graph.value("MATCH (n:Importing) RETURN count(n)") > 0

    resumed = run_cli("import", str(out), "--org", "acme2", env=env(neo4j_target))
    assert resumed.returncode == 0, resumed.stderr
    assert "into acme2" in resumed.stderr
    assert graph.value("MATCH (n) WHERE n:Importing OR n:Import RETURN count(n)") == 0
    assert counts(graph) == in_graph
    assert graph.value("MATCH (o:Org) RETURN collect(o.id)") == ["acme2"]

    ana2 = Api(server.url, make_token(neo4j_target, "acme2", "ana"))
    platform2 = Api(server.url, make_token(neo4j_target, "acme2", None, service="platform"))
    after = views(platform2)
    assert after.keys() == before.keys()
    for key in before:
        assert after[key] == before[key], key
    assert flat(ana2.graphql(AGENT, id=before["agents"][0]["id"])) == before_ana

    again = run_cli("import", str(out), "--org", "acme2", env=env(neo4j_target))
    assert again.returncode == 1
    assert again.stderr.strip() == (
        "openbot-memory: error: org 'acme2' exists already: import into a new name (--org NEW)")
    for client in (ana, ben, platform, ana2, platform2):
        client.http.close()
    assert os.path.exists(out)
