"""Backup and restore of one org: export a rich org, import it under a new name (in an empty
database, since ids are kept), and every view and provenance query answers the same."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.errors import SetupError
from app.store.backup import FORMAT, export_org, import_org
from app.store.database import Database, Target, Tx
from tests.api.test_consolidation import stored_anywhere
from tests.api.test_erasure import held, wait_blocked
from tests.api.test_learning import CONSOLIDATE
from tests.conftest import ROOT, Api, Graph, RunningServer, assistant, flat, make_token, user
from tests.openai_stub import OpenAIStub, Reply
from tests.test_cli import CLI, run_cli

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


def stop_past(records: int) -> Callable[[int], None]:
    """An import's progress callback that interrupts it (Ctrl-C) once `records` are in."""
    applied = 0

    def advance(n: int) -> None:
        nonlocal applied
        applied += n
        if applied >= records:
            raise KeyboardInterrupt

    return advance


def import_here(
    target: Target, export: Path, org: str, advance: Callable[[int], None], batch: int
) -> None:
    """Import `export` as `org` in this process, in batches of `batch` records."""

    async def run() -> None:
        db = await Database.connect(target)
        try:
            await import_org(db, export, org, advance, batch=batch)
        finally:
            await db.close()

    asyncio.run(run())


def interrupt_import(
    target: Target, export: Path, advance: Callable[[int], None], batch: int
) -> None:
    """Import `export` as org acme2 until `advance` (told each batch's size) interrupts it."""
    with pytest.raises(KeyboardInterrupt):
        import_here(target, export, "acme2", advance, batch)


def interrupted_small_import(
    server: RunningServer, neo4j_target: Target, graph: Graph, tmp_path: Path
) -> Path:
    """A small org's export (`export_a_small_org`), imported as acme2 into the emptied database
    until interrupted past its fourth record; the export."""
    out = export_a_small_org(server, neo4j_target, graph, tmp_path)
    graph.rows("MATCH (n) DETACH DELETE n")  # ids are kept: they need an empty database
    interrupt_import(neo4j_target, out, stop_past(4), batch=2)
    return out

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

    interrupt_import(neo4j_target, out, stop_past(60), batch=7)
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


def export_a_small_org(
    server: RunningServer, neo4j_target: Target, graph: Graph, tmp_path: Path
) -> Path:
    """Org acme with one session of one consolidated turn, exported to a file."""
    ana = Api(server.url, make_token(neo4j_target, "acme", "ana"))
    session = ana.session()["session"]["id"]
    ana.turn(session, user("Hi, my name is Ana. Our budget is 1500 EUR."), assistant("Noted."))
    ana.wait_idle(session)
    ana.http.close()
    wait_idle(graph)
    out = tmp_path / "acme.jsonl"
    assert run_cli("export", "--org", "acme", "--out", str(out),
                   env=env(neo4j_target)).returncode == 0
    return out


def test_an_export_that_is_cut_or_changed_is_refused_before_anything_is_written(
    server: RunningServer, neo4j_target: Target, graph: Graph, tmp_path: Path
) -> None:
    out = export_a_small_org(server, neo4j_target, graph, tmp_path)
    lines = out.read_text().splitlines(keepends=True)
    nodes = json.loads(lines[0])["nodes"]
    in_graph = counts(graph)
    cut_mid_line = tmp_path / "mid-line.jsonl"
    cut_mid_line.write_text("".join(lines[:-3]) + lines[-3][:20])
    cut_at_a_line = tmp_path / "at-a-line.jsonl"
    cut_at_a_line.write_text("".join(lines[:nodes]))  # the last node and every relationship gone
    shuffled = tmp_path / "shuffled.jsonl"
    shuffled.write_text("".join([lines[0], lines[-1], *lines[1:-1]]))
    refused = {
        cut_mid_line: f"{cut_mid_line}: line {len(lines) - 2} is not a record of an export: "
                      "the file is cut or changed",
        cut_at_a_line: f"{cut_at_a_line} holds {nodes - 1} nodes and 0 relationships, its "
                       f"header says {nodes} and {in_graph[1]}: the file is cut or changed",
        shuffled: f"{shuffled}: line 2 names a node the file does not hold before it: "
                  "the file is cut or changed",
    }
    for path, message in refused.items():
        answer = run_cli("import", str(path), "--org", "acme2", env=env(neo4j_target))
        assert answer.returncode == 1, path
        assert answer.stderr.splitlines()[-1] == f"openbot-memory: error: {message}", path
        # nothing of it was written: the org can be imported from the whole file later
        assert graph.value("MATCH (n) WHERE n:Import OR n:Importing OR "
                           "(n:Org AND n.id = 'acme2') RETURN count(n)") == 0
        assert counts(graph) == in_graph

    # blank lines are no records: the file imports whole, in batches that cross them
    graph.rows("MATCH (n) DETACH DELETE n")
    spaced = tmp_path / "spaced.jsonl"
    spaced.write_text("".join(line + ("\n" if n % 3 == 0 else "")
                              for n, line in enumerate(lines)) + "\n\n")

    import_here(neo4j_target, spaced, "acme2", lambda n: None, batch=3)
    assert counts(graph) == in_graph


def test_a_record_no_export_holds_is_refused_before_anything_is_written(
    server: RunningServer, neo4j_target: Target, graph: Graph, tmp_path: Path
) -> None:
    # a node no export writes (a value Neo4j does not store, no label, a token, an import's
    # own mark) is refused with the file whole, as a changed line is: tokens are never part
    # of an export, so no file can plant one
    out = export_a_small_org(server, neo4j_target, graph, tmp_path)
    lines = out.read_text().splitlines(keepends=True)
    in_graph = counts(graph)
    tokens = "MATCH (t:Token) RETURN count(t)"
    held = graph.value(tokens)
    node = json.loads(lines[1])
    changes: dict[str, dict[str, Any]] = {
        "map": {**node, "properties": {**node["properties"], "x": {"y": 1}}},
        "mixed": {**node, "properties": {**node["properties"], "x": [1, "a"]}},
        "wide": {**node, "properties": {**node["properties"], "x": 2**64}},
        "unlabelled": {**node, "labels": []},
        "token": {**node, "labels": ["Token"], "properties": {"hash": "x", "id": "tok-x"}},
        "import-ref": {**node, "properties": {**node["properties"], "importRef": "r"}},
    }
    for name, record in changes.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join([lines[0], json.dumps(record) + "\n", *lines[2:]]))
        answer = run_cli("import", str(path), "--org", "acme2", env=env(neo4j_target))
        assert answer.returncode == 1, name
        assert answer.stderr.splitlines()[-1] == (
            f"openbot-memory: error: {path}: line 2 is not a record of an export: "
            "the file is cut or changed"), name
        assert graph.value("MATCH (n) WHERE n:Import OR n:Importing OR "
                           "(n:Org AND n.id = 'acme2') RETURN count(n)") == 0, name
        assert counts(graph) == in_graph
        assert graph.value(tokens) == held


def test_two_imports_of_a_file_at_once_never_apply_one_batch_twice(
    server: RunningServer, neo4j_target: Target, graph: Graph, tmp_path: Path
) -> None:
    # an import resumed, and once it has read its checkpoint, another run of it applies the
    # batch it is at (the checkpoint moved, not yet committed): the first waits for the other,
    # finds the checkpoint moved, and stops saying so, having written nothing of the batch
    out = interrupted_small_import(server, neo4j_target, graph, tmp_path)
    marked = "MATCH (n:Importing) RETURN count(n)"
    before = graph.value(marked)
    moving, waited = threading.Event(), threading.Event()

    def other_run() -> None:
        with held(graph, "MATCH (i:Import {org: 'acme2'}) SET i.lines = i.lines + 2"):
            moving.set()
            wait_blocked(graph, "importRef", "the import never waited for the other run")
            waited.set()

    def advance(n: int) -> None:
        if not moving.is_set():  # told the checkpoint it resumes from: the other run starts
            other.start()
            assert moving.wait(30)

    other = threading.Thread(target=other_run)
    try:
        with pytest.raises(SetupError) as stopped:
            import_here(neo4j_target, out, "acme2", advance, batch=2)
    finally:
        other.join(timeout=90)
    assert waited.is_set()
    assert str(stopped.value) == "another import of this file is running; let it finish"
    assert graph.value(marked) == before


def test_an_import_refused_after_it_wrote_records_says_they_stay_and_how_to_delete_them(
    server: RunningServer, neo4j_target: Target, graph: Graph, tmp_path: Path
) -> None:
    # the export's org is still in the database: its org and members import under the new
    # name (their ids are the org's), and its first id of another kind is refused. What the
    # import wrote stays (its checkpoint too), and the error says so, and how to delete it
    out = export_a_small_org(server, neo4j_target, graph, tmp_path)
    with pytest.raises(SetupError) as refused:
        import_here(neo4j_target, out, "acme3", lambda n: None, batch=1)
    assert graph.value("MATCH (i:Import {org: 'acme3'}) RETURN i.lines") > 0
    assert str(refused.value) == (
        "the export's ids are in this database already (is org 'acme' still here?): import "
        "into another database, or delete that org first; what it wrote of org 'acme3' stays "
        "until `openbot-memory org delete --org acme3`")
    deleted = run_cli("org", "delete", "--org", "acme3", "--yes", env=env(neo4j_target))
    assert deleted.returncode == 0, deleted.stderr
    assert graph.value("MATCH (n) WHERE n:Import OR n:Importing RETURN count(n)") == 0


def test_an_org_whose_import_is_unfinished_is_not_exported(
    server: RunningServer, neo4j_target: Target, graph: Graph, tmp_path: Path
) -> None:
    # its nodes are the import's until it ends, and no import takes such a file: the export
    # says what to do, and writes no file; once the import is finished, it exports
    out = interrupted_small_import(server, neo4j_target, graph, tmp_path)
    again = tmp_path / "again.jsonl"
    refused = run_cli("export", "--org", "acme2", "--out", str(again), env=env(neo4j_target))
    assert refused.returncode == 1
    assert refused.stderr.splitlines()[-1] == (
        "openbot-memory: error: an import into 'acme2' is unfinished: run it again to finish "
        "it (or delete the org with `openbot-memory org delete --org acme2`), then export it")
    assert not again.exists()
    resumed = run_cli("import", str(out), "--org", "acme2", env=env(neo4j_target))
    assert resumed.returncode == 0, resumed.stderr
    exported = run_cli("export", "--org", "acme2", "--out", str(again), env=env(neo4j_target))
    assert exported.returncode == 0, exported.stderr
    assert json.loads(again.read_text().splitlines()[0])["org"] == "acme2"


def test_an_import_of_a_file_into_another_org_leaves_an_unfinished_one_of_it_alone(
    server: RunningServer, neo4j_target: Target, graph: Graph, tmp_path: Path
) -> None:
    # an interrupted import into acme2, then the same file into its own org's name: the
    # second never takes the first's nodes (its ids are there: it is refused, naming them),
    # and the first, run again, finishes whole
    out = export_a_small_org(server, neo4j_target, graph, tmp_path)
    in_graph = counts(graph)
    graph.rows("MATCH (n) DETACH DELETE n")  # ids are kept: they need an empty database
    interrupt_import(neo4j_target, out, stop_past(4), batch=2)
    marked = "MATCH (n:Importing) RETURN count(n)"
    held = (graph.value(marked), graph.value("MATCH (o:Org) RETURN collect(o.id)"))
    assert held[0] > 0

    other = run_cli("import", str(out), env=env(neo4j_target))
    assert other.returncode == 1, other.stderr
    assert "ids are in this database already" in other.stderr.splitlines()[-1]
    assert (graph.value(marked), graph.value("MATCH (o:Org) RETURN collect(o.id)")) == held
    # the refused import wrote nothing, and leaves no checkpoint holding the org's name
    assert graph.value("MATCH (i:Import {org: 'acme'}) RETURN count(i)") == 0

    resumed = run_cli("import", str(out), "--org", "acme2", env=env(neo4j_target))
    assert resumed.returncode == 0, resumed.stderr
    assert graph.value("MATCH (n) WHERE n:Importing OR (n:Import AND n.org = 'acme2') "
                       "RETURN count(n)") == 0
    restored = (graph.value("MATCH (n) WHERE NOT n:Token AND NOT n:Import RETURN count(n)"),
                counts(graph)[1])
    assert restored == in_graph  # every node once, no edge twice


def test_an_import_that_stopped_before_it_wrote_anything_gives_way_to_another_file(
    server: RunningServer, neo4j_target: Target, graph: Graph, tmp_path: Path
) -> None:
    # an import stopped in its first batch (Ctrl-C) leaves a checkpoint of nothing written:
    # another file into the same name goes ahead, where nothing could clear the name
    out = export_a_small_org(server, neo4j_target, graph, tmp_path)
    deleted = run_cli("org", "delete", "--org", "acme", "--yes", env=env(neo4j_target))
    assert deleted.returncode == 0, deleted.stderr
    graph.rows("CREATE (:Import {org: 'acme2', digest: 'another-file', lines: 0, "
               "refs: 'x:', startedAt: 0})")
    answer = run_cli("import", str(out), "--org", "acme2", env=env(neo4j_target))
    assert answer.returncode == 0, answer.stderr
    assert graph.value("MATCH (o:Org {id: 'acme2'}) RETURN count(o)") == 1
    assert graph.value("MATCH (i:Import) RETURN count(i)") == 0
    # one that wrote records keeps the name: org delete finds them
    graph.rows("CREATE (:Import {org: 'acme3', digest: 'another-file', lines: 3, "
               "refs: 'y:', startedAt: 0})")
    refused = run_cli("import", str(out), "--org", "acme3", env=env(neo4j_target))
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        "openbot-memory: error: an import of another file into 'acme3' is unfinished")


def test_an_export_into_a_folder_that_is_not_there_is_refused_before_it_reads(
    server: RunningServer, neo4j_target: Target, tmp_path: Path
) -> None:
    Api(server.url, make_token(neo4j_target, "acme", "ana")).http.close()
    for out, message in (
        (tmp_path / "no" / "such" / "acme.jsonl", f"there is no folder {tmp_path / 'no' / 'such'}"),
        (tmp_path, f"{tmp_path} is a folder: name the file to write"),
    ):
        answer = run_cli("export", "--org", "acme", "--out", str(out), env=env(neo4j_target))
        assert answer.returncode == 1, out
        assert answer.stderr.splitlines()[-1] == f"openbot-memory: error: {message}"
        assert not list(tmp_path.rglob("*.partial"))
        assert not (tmp_path.parent / f"{tmp_path.name}.partial").exists()


def export_acme(target: Target, out: Path) -> None:
    """Export org acme into `out`, in this process."""

    async def export() -> None:
        db = await Database.connect(target)
        try:
            await export_org(db, "acme", out, lambda n: None)
        finally:
            await db.close()

    asyncio.run(export())


def test_an_export_interrupted_while_it_writes_its_file_leaves_no_file(
    api: Api, neo4j_target: Target, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ctrl-C while the file is written: no file at the path, and no partial one beside it
    api.turn(api.session()["session"]["id"], user("Before the export."))
    out = tmp_path / "acme.jsonl"

    def cut(source: Any, target: Any) -> None:
        target.write(source.readline())
        raise KeyboardInterrupt

    monkeypatch.setattr("app.store.backup.shutil.copyfileobj", cut)

    with pytest.raises(KeyboardInterrupt):
        export_acme(neo4j_target, out)
    assert list(tmp_path.iterdir()) == []


def test_an_export_writes_a_partial_file_of_its_own_readable_by_its_owner(
    api: Api, neo4j_target: Target, tmp_path: Path
) -> None:
    # another export to the same path writes its own file beside it: this one neither writes
    # into it nor moves it; the export, which holds the org's memory, is its owner's to read
    api.turn(api.session()["session"]["id"], user("Before the export."))
    out = tmp_path / "acme.jsonl"
    theirs = tmp_path / "acme.jsonl.partial"
    theirs.write_text("another export, half way\n")
    export_acme(neo4j_target, out)
    assert theirs.read_text() == "another export, half way\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["acme.jsonl", "acme.jsonl.partial"]
    assert json.loads(out.read_text().splitlines()[0])["org"] == "acme"
    assert out.stat().st_mode & 0o777 == 0o600


def test_an_export_to_stdout_whose_reader_is_gone_ends_quietly(
    api: Api, neo4j_target: Target
) -> None:
    # `export | head -1`: the reader closes the pipe; the export ends with a closed pipe's
    # status (128 + SIGPIPE) and says nothing more, no traceback
    api.turn(api.session()["session"]["id"], user("Before the export."))
    read, write = os.pipe()
    os.close(read)  # the reader is gone before anything is written
    try:
        done = subprocess.run(
            [*CLI, "export", "--org", "acme"], stdout=write, stderr=subprocess.PIPE,
            text=True, cwd=ROOT, env={**os.environ, **env(neo4j_target)}, timeout=120,
            check=False,
        )
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (141, "")


def test_an_export_to_stdout_is_utf8_whatever_the_locale(
    api: Api, neo4j_target: Target
) -> None:
    # the export format is UTF-8 JSON lines, on stdout as in a file, under any locale
    api.remember(api.session()["session"]["id"], "greeting", "Grüße 🌍")
    done = subprocess.run(
        [*CLI, "export", "--org", "acme"], capture_output=True, cwd=ROOT, timeout=120,
        env={**os.environ, **env(neo4j_target), "LC_ALL": "C", "LANG": "C",
             "PYTHONIOENCODING": "latin-1"}, check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Grüße 🌍" in done.stdout.decode("utf-8")


def test_an_export_the_org_moves_under_is_read_again_whole(
    api: Api, neo4j_target: Target, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a turn that lands while an export reads moves its session's HEAD to a version the export
    # did not read: the export reads the org again, and its file holds every relationship
    # between its nodes, the session's HEAD at the turn among them
    sid = api.session()["session"]["id"]
    api.turn(sid, user("Before the export."))
    rows = Tx.rows
    turned: list[dict[str, Any]] = []

    async def rows_while_a_turn_lands(self: Tx, name: str, **params: Any) -> list[Any]:
        if name == "export_relationships" and not turned:
            turned.append(api.turn(sid, user("During the export.")))
        return await rows(self, name, **params)

    monkeypatch.setattr(Tx, "rows", rows_while_a_turn_lands)
    out = tmp_path / "acme.jsonl"

    export_acme(neo4j_target, out)
    assert turned
    records = [json.loads(line) for line in out.read_text().splitlines()[1:]]
    nodes = {r["node"]: r["properties"] for r in records if "node" in r}
    heads = [nodes[r["end"]]["id"] for r in records
             if r.get("relationship") == "HEAD" and nodes[r["start"]].get("id") == sid]
    assert heads == [api.view(sid)["session"]["head"]]


def test_an_org_with_an_erasure_round_trips_with_its_tombstones_and_record(
    server: RunningServer, neo4j_target: Target, graph: Graph, tmp_path: Path
) -> None:
    # SPEC 7: an erased entry stays a tombstone in the graph, and the erasure a record; the
    # export holds every node of the org, these too
    ana = Api(server.url, make_token(neo4j_target, "acme", "ana"))
    platform = Api(server.url, make_token(neo4j_target, "acme", None, service="platform"))
    agent = platform.agent("desk", shared=True)["id"]
    ana.remember(ana.session(agent)["session"]["id"], "note", "Ana's note.")
    ana.ok(ana.post(f"/v1/agents/{agent}/memory", {"expected": 0, "command": {
        "_tag": "Remember", "key": "seat", "content": "Ana prefers aisle seats.",
        "kind": "preference", "about": "ana", "visibility": "private"}}))
    platform.ok(platform.post("/v1/org/persons/ana/erase"))
    erasures = platform.ok(platform.get("/v1/org/erasures"))
    log = platform.ok(platform.get(f"/v1/agents/{agent}/memory/log"))
    in_graph = counts(graph)
    tombstones = graph.value("MATCH (n) WHERE n:AgentEntry OR n:AgentChange OR n:Erasure "
                             "RETURN count(n)")
    assert tombstones == 3  # the erased entry, its change and the erasure
    for client in (ana, platform):
        client.http.close()

    out = tmp_path / "acme.jsonl"
    exported = run_cli("export", "--org", "acme", "--out", str(out), env=env(neo4j_target))
    assert exported.returncode == 0, exported.stderr
    header = json.loads(out.read_text().splitlines()[0])
    assert (header["nodes"], header["relationships"]) == in_graph

    graph.rows("MATCH (n) DETACH DELETE n")
    imported = run_cli("import", str(out), "--org", "acme2", env=env(neo4j_target))
    assert imported.returncode == 0, imported.stderr
    assert counts(graph) == in_graph
    platform2 = Api(server.url, make_token(neo4j_target, "acme2", None, service="platform"))
    assert platform2.ok(platform2.get("/v1/org/erasures")) == erasures
    assert platform2.ok(platform2.get(f"/v1/agents/{agent}/memory/log")) == log
    platform2.http.close()


def test_org_delete_removes_an_import_stopped_among_its_nodes(
    server: RunningServer, neo4j_target: Target, graph: Graph, tmp_path: Path
) -> None:
    # the nodes of an import stopped before its relationships hang from nothing yet: deleting
    # the org removes them too, and the whole file imports again
    out = export_a_small_org(server, neo4j_target, graph, tmp_path)
    in_graph = counts(graph)
    graph.rows("MATCH (n) DETACH DELETE n")

    def stop_after_a_batch(n: int) -> None:
        if n:  # the first batch is written
            raise KeyboardInterrupt

    interrupt_import(neo4j_target, out, stop_after_a_batch, batch=4)
    assert graph.value("MATCH (n:Importing) RETURN count(n)") == 4

    deleted = run_cli("org", "delete", "--org", "acme2", "--yes", env=env(neo4j_target))
    assert deleted.returncode == 0, deleted.stderr
    assert deleted.stdout.strip() == "deleted 5 nodes of acme2"  # the 4 and the import's mark
    assert graph.value("MATCH (n) RETURN count(n)") == 0
    again = run_cli("import", str(out), "--org", "acme2", env=env(neo4j_target))
    assert again.returncode == 0, again.stderr
    assert counts(graph) == in_graph


def test_retention_empties_no_item_of_an_import_until_it_ends(
    server: RunningServer, neo4j_target: Target, graph: Graph, tmp_path: Path,
    openai_stub: OpenAIStub, start_server: Callable[..., RunningServer],
) -> None:
    # SPEC 7: retention empties an item and what runs said of it together; an unfinished
    # import has its items and not yet the edges that name what read them, so retention leaves
    # them until the import ends, and then takes both
    ana = Api(server.url, make_token(neo4j_target, "acme", "ana"))
    ana.patch("/v1/org/settings", {"model": "openai:stub"})
    sid = ana.session()["session"]["id"]
    openai_stub.script_for(CONSOLIDATE, Reply(content="refused: OLD-IMPORT-1f", status=400))
    ana.turn(sid, user("I fly OLD-IMPORT-1f", id="u-1"))
    [run] = ana.wait_idle(sid)
    assert "OLD-IMPORT-1f" in run["error"]
    ana.http.close()
    wait_idle(graph)
    out = tmp_path / "acme.jsonl"
    assert run_cli("export", "--org", "acme", "--out", str(out),
                   env=env(neo4j_target)).returncode == 0
    nodes = json.loads(out.read_text().splitlines()[0])["nodes"]
    graph.rows("MATCH (n) DETACH DELETE n")  # ids are kept: they need an empty database

    interrupt_import(neo4j_target, out, stop_past(nodes), batch=1)  # its nodes, no edge yet
    assert graph.value("MATCH (:Importing)-[r]->() RETURN count(r)") == 0
    graph.rows("MATCH (i:Item:Importing) SET i.at = i.at - 2 * 86400000")
    # a witness older than the imported items: retention, which empties the oldest first, has
    # looked at them once it has emptied the witness
    bea = Api(server.url, make_token(neo4j_target, "other", "bea"))
    witness = bea.session()["session"]["id"]
    bea.turn(witness, user("A witness.", id="w-1"))
    bea.http.close()
    graph.rows("MATCH (i:Item {session: $s}) SET i.at = i.at - 3 * 86400000", s=witness)
    start_server(item_retention_days=1, retention_poll_seconds=0.1)
    emptied = "MATCH (i:Item {session: $s}) RETURN coalesce(i.erased, false)"
    deadline = time.monotonic() + 60
    while not graph.value(emptied, s=witness):
        assert time.monotonic() < deadline, "retention emptied no witness"
        time.sleep(0.05)
    assert graph.value("MATCH (i:Item:Importing) WHERE i.erased RETURN count(i)") == 0

    resumed = run_cli("import", str(out), "--org", "acme2", env=env(neo4j_target))
    assert resumed.returncode == 0, resumed.stderr
    deadline = time.monotonic() + 60
    while graph.value(emptied, s=sid) is not True or stored_anywhere(graph, "OLD-IMPORT-1f"):
        assert time.monotonic() < deadline, "retention left what a run said of an imported item"
        time.sleep(0.05)
    platform = Api(server.url, make_token(neo4j_target, "acme2", None, service="platform"))
    [run] = platform.ok(platform.get(f"/v1/sessions/{sid}/runs"))["runs"]
    assert (run["status"], run["error"]) == ("failed", None)
