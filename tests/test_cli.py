"""The command line as a person uses it: one-line errors, the local Neo4j's status, tokens."""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from app.memory.access.tokens import token_hash
from app.store.database import Target
from app.store.local_server import LocalServer
from tests.conftest import ROOT, Graph, neo4j_state_dir

CLI = [sys.executable, "-m", "app"]


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 60) -> (
    subprocess.CompletedProcess[str]
):
    return subprocess.run(
        [*CLI, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        timeout=timeout,
        check=False,
    )


def test_serve_with_a_wrong_neo4j_uri_says_what_to_do_in_one_line() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        dead = sock.getsockname()[1]  # nothing listens once the socket is closed
    answer = run_cli(
        "serve",
        "--port",
        "0",
        env={"NEO4J_URI": f"bolt://127.0.0.1:{dead}", "NEO4J_PASSWORD": "x"},
    )
    assert answer.returncode == 1
    lines = answer.stderr.strip().splitlines()
    assert len(lines) == 1, answer.stderr
    assert lines[0].startswith("openbot-memory: error: Cannot reach Neo4j at bolt://127.0.0.1:")
    assert "NEO4J_URI" in lines[0]
    assert "Traceback" not in answer.stderr


def test_serve_with_a_database_neo4j_lacks_says_what_to_do_in_one_line(
    neo4j_target: Target,
) -> None:
    # Bolt answers, the database does not exist: one line naming NEO4J_DATABASE, no traceback
    answer = run_cli(
        "serve", "--port", "0",
        env={"NEO4J_URI": neo4j_target.uri, "NEO4J_PASSWORD": neo4j_target.password,
             "NEO4J_DATABASE": "nope"},
    )
    assert answer.returncode == 1
    assert answer.stderr.strip().splitlines() == [
        f"openbot-memory: error: Neo4j at {neo4j_target.uri} has no database 'nope': "
        "check NEO4J_DATABASE."
    ]


def test_serve_on_a_port_in_use_says_what_to_do_in_one_line(neo4j_target: Target) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        answer = run_cli(
            "serve",
            "--port",
            str(port),
            env={"NEO4J_URI": neo4j_target.uri, "NEO4J_PASSWORD": neo4j_target.password},
        )
    assert answer.returncode == 1
    assert answer.stderr.strip().splitlines() == [
        f"openbot-memory: error: cannot listen on 127.0.0.1:{port} (Address already in use): "
        "pass --port with a free port"
    ]


def test_serve_on_an_address_this_machine_lacks_says_to_change_the_host() -> None:
    # 192.0.2.1 is an address for documentation (RFC 5737), no machine's own: the advice is
    # about the host, not the port, and is told before serve reaches Neo4j
    answer = run_cli("serve", "--host", "192.0.2.1", "--port", "8000",
                     env={"NEO4J_URI": "bolt://127.0.0.1:1"})
    assert answer.returncode == 1
    assert answer.stderr.strip().splitlines() == [
        "openbot-memory: error: cannot listen on 192.0.2.1:8000 (Cannot assign requested "
        "address): pass --host with a name or address of this machine"
    ]


def ipv6_loopback() -> bool:
    """Whether this machine listens on ::1 (a container may have IPv6 turned off)."""
    try:
        with socket.socket(socket.AF_INET6) as sock:
            sock.bind(("::1", 0))
    except OSError:
        return False
    return True


def printed_until_graphiql(serving: subprocess.Popen[str]) -> list[str]:
    """The lines `serve` prints, up to its GraphiQL line."""
    assert serving.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + 120
    while not lines or not lines[-1].startswith("GraphiQL: "):
        assert time.monotonic() < deadline, ("no GraphiQL line", lines)
        ready, _, _ = select.select([serving.stdout], [], [], 1)
        if ready:
            line = serving.stdout.readline()
            assert line, ("serve ended", lines, serving.stderr and serving.stderr.read())
            lines.append(line)
    return lines


def test_serve_answers_on_the_port_it_prints_from_the_moment_it_prints_it(
    neo4j_target: Target,
) -> None:
    # the port `--port 0` chose is held from the GraphiQL line on: a client connecting at
    # once is answered when the service has started, not refused
    env = {**os.environ, "NEO4J_URI": neo4j_target.uri,
           "NEO4J_PASSWORD": neo4j_target.password, "PYTHONUNBUFFERED": "1"}
    serving = subprocess.Popen([*CLI, "serve", "--port", "0"], cwd=ROOT, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = printed_until_graphiql(serving)[-1].removeprefix("GraphiQL: ").strip()
        assert url.startswith("http://127.0.0.1:")
        assert not url.startswith("http://127.0.0.1:0/")
        answer = httpx.get(url.removesuffix("/graphql") + "/healthz", timeout=120)
        assert answer.status_code == 200
    finally:
        serving.terminate()
        serving.communicate(timeout=30)


def test_serve_at_debug_logs_no_content_and_no_token(
    neo4j_target: Target, tokens: Callable[[str, str], str], tmp_path: Path,
) -> None:
    # DEBUG is the service's own level: the driver's DEBUG lines, which quote a statement's
    # parameters (a memory's content, a token's hash), stay out of the log
    token = tokens("acme", "ana")
    env = {**os.environ, "NEO4J_URI": neo4j_target.uri, "NEO4J_PASSWORD": neo4j_target.password,
           "PYTHONUNBUFFERED": "1", "OPENBOT_MEMORY_LOG_LEVEL": "DEBUG",
           "OPENBOT_MEMORY_WARMUP_ROUNDS": "0"}
    log = tmp_path / "serve.log"  # a file, which no amount of logging fills up as a pipe
    with log.open("w") as err:
        serving = subprocess.Popen([*CLI, "serve", "--port", "0"], cwd=ROOT, env=env,
                                   stdout=subprocess.PIPE, stderr=err, text=True)
    try:
        url = printed_until_graphiql(serving)[-1].removeprefix("GraphiQL: ").strip()
        api = httpx.Client(base_url=url.removesuffix("/graphql"), timeout=120,
                           headers={"Authorization": f"Bearer {token}"})
        with api:
            made = api.post("/v1/sessions", json={"agent": api.post(
                "/v1/agents", json={"name": "planner"}).json()["id"]})
            assert made.status_code == 201, made.text
            view = made.json()["session"]
            remembered = api.post(f"/v1/sessions/{view['id']}/memory", json={
                "expected": view["head"], "revision": view["revision"],
                "command": {"_tag": "Remember", "key": "door", "content": "code 4711-debug",
                            "kind": "fact"}})
            assert remembered.status_code == 200, remembered.text
    finally:
        serving.terminate()
        serving.communicate(timeout=30)
    logged = log.read_text()
    assert "POST /v1/sessions/{id}/memory" in logged  # the request's own line is there
    assert "4711-debug" not in logged
    assert token not in logged
    assert token_hash(token) not in logged


@pytest.mark.skipif(not socket.has_ipv6 or not ipv6_loopback(),
                    reason="this machine has no IPv6 loopback to listen on")
def test_serve_on_an_ipv6_host_and_a_port_the_system_chooses(neo4j_target: Target) -> None:
    # `--host ::1` listens on IPv6, and `--port 0` on a free port the system chose: the
    # GraphiQL line names the address the service answers on
    env = {**os.environ, "NEO4J_URI": neo4j_target.uri,
           "NEO4J_PASSWORD": neo4j_target.password, "PYTHONUNBUFFERED": "1"}
    serving = subprocess.Popen([*CLI, "serve", "--host", "::1", "--port", "0"], cwd=ROOT,
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    try:
        lines = printed_until_graphiql(serving)
        url = lines[-1].removeprefix("GraphiQL: ").strip()
        assert url.startswith("http://[::1]:"), lines
        assert url.endswith("/graphql"), lines
        assert not url.startswith("http://[::1]:0/")
        deadline = time.monotonic() + 60
        while True:
            try:
                answer = httpx.get(url.removesuffix("/graphql") + "/healthz", timeout=5)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the service never answered"
                time.sleep(0.2)
        assert answer.status_code == 200
    finally:
        serving.terminate()
        serving.communicate(timeout=30)


def test_token_create_stores_only_a_hash(neo4j_target: Target, graph: Graph) -> None:
    answer = run_cli(
        "token",
        "create",
        "--org",
        "acme",
        "--person",
        "ana",
        env={"NEO4J_URI": neo4j_target.uri, "NEO4J_PASSWORD": neo4j_target.password},
    )
    assert answer.returncode == 0, answer.stderr
    token = answer.stdout.strip()
    assert token.startswith("obm_")
    stored = graph.rows("MATCH (t:Token)-[:GRANTS]->(p:Person) RETURN t {.*} AS t, p.id AS p")
    assert len(stored) == 1
    assert stored[0]["p"] == "ana"
    assert token not in str(stored)


def test_token_create_rejects_a_bad_name() -> None:
    answer = run_cli("token", "create", "--org", "two words", "--person", "ana",
                     env={"NEO4J_URI": "bolt://127.0.0.1:1"})
    assert answer.returncode == 1
    assert answer.stderr.splitlines() == [
        "openbot-memory: error: org is a name of 1 to 100 characters without spaces"
    ]


def test_token_create_rejects_a_name_that_cannot_stand_in_a_path() -> None:
    # a person's name is a segment of /v1/org/persons/{person}/erase: a / would split it, and
    # a client's URL resolves . and .. away
    for person in ("team/ana", ".", ".."):
        answer = run_cli("token", "create", "--org", "acme", "--person", person,
                         env={"NEO4J_URI": "bolt://127.0.0.1:1"})
        assert answer.returncode == 1, person
        assert answer.stderr.splitlines() == [
            "openbot-memory: error: person is a name without / that is not . or .."
        ], person


def test_names_that_are_not_text_are_refused_in_one_line_before_connecting() -> None:
    # A byte that is not UTF-8 in an argument ($'ac\xffme') reaches Python as half of a
    # surrogate pair, which no store can keep: one line naming the argument, exit 1, and no
    # connection tried (the URI below answers nothing).
    not_text = "ac\udcffme"
    for args, said in (
        (("token", "create", "--org", not_text, "--person", "ana"), "org"),
        (("token", "create", "--org", "acme", "--person", not_text), "person"),
        (("token", "list", "--org", not_text), "org"),
        (("token", "revoke", f"obm_{not_text}"), "token"),
        (("erase", "--org", "acme", "--person", not_text), "person"),
        (("export", "--org", not_text), "org"),
    ):
        answer = run_cli(*args, env={"NEO4J_URI": "bolt://127.0.0.1:1"})
        assert answer.returncode == 1, args
        assert answer.stderr.splitlines() == [
            f"openbot-memory: error: {said} is not valid Unicode text (a lone surrogate)"
        ], args
    # a name that may already be there is text enough: an org or person imported, or made
    # before a rule of names, can still be erased, exported or deleted (here it gets as far
    # as connecting)
    for args in (("erase", "--org", "acme", "--person", "team/ana"),
                 ("export", "--org", "two words")):
        answer = run_cli(*args, env={"NEO4J_URI": "bolt://127.0.0.1:1"})
        assert answer.returncode == 1, args
        assert "Cannot reach Neo4j at bolt://127.0.0.1:1" in answer.stderr, args


def test_token_list_checks_the_org_name_before_connecting() -> None:
    answer = run_cli("token", "list", "--org", "two words",
                     env={"NEO4J_URI": "bolt://127.0.0.1:1"})
    assert answer.returncode == 1
    assert answer.stderr.splitlines() == [
        "openbot-memory: error: org is a name of 1 to 100 characters without spaces"
    ]


def test_neo4j_status_prints_how_to_log_in_to_the_browser(
    neo4j_target: Target, local_neo4j: LocalServer
) -> None:
    state = str(neo4j_state_dir())
    answer = run_cli("neo4j", "status", env={"OPENBOT_MEMORY_STATE_DIR": state})
    assert answer.returncode == 0, answer.stderr
    assert f"connect URL: {neo4j_target.uri}" in answer.stdout
    assert f"password:    {neo4j_target.password}" in answer.stdout
    assert "/browser/" in answer.stdout
    mode = (Path(state) / "neo4j" / "state.json").stat().st_mode & 0o777
    assert mode == 0o600


def test_neo4j_status_when_none_runs(tmp_path: Path) -> None:
    answer = run_cli("neo4j", "status", env={"OPENBOT_MEMORY_STATE_DIR": str(tmp_path)})
    assert answer.returncode == 3
    assert "not running" in answer.stdout


def test_a_state_file_naming_a_process_id_now_anothers_is_no_running_neo4j(
    tmp_path: Path,
) -> None:
    # the state file outlives a reboot, and its process id may be another process's since:
    # status says none runs, and stop leaves that process alone
    other = subprocess.Popen(["sleep", "300"])
    try:
        state = tmp_path / "neo4j" / "state.json"
        state.parent.mkdir()
        home = tmp_path.resolve() / "neo4j"
        state.write_text(json.dumps({"pid": other.pid, "bolt_port": 1, "http_port": 2,
                                     "user": "neo4j", "password": "pw", "home": str(home)}))
        env = {"OPENBOT_MEMORY_STATE_DIR": str(tmp_path)}
        status = run_cli("neo4j", "status", env=env)
        assert (status.returncode, status.stdout.splitlines()[0]) == (
            3, "Neo4j is not running. Start it with `openbot-memory neo4j start`."), status
        stopped = run_cli("neo4j", "stop", env=env)
        assert (stopped.returncode, stopped.stdout.strip()) == (0, "Neo4j was not running.")
        assert other.poll() is None  # still running
    finally:
        other.kill()
        other.wait()


def test_a_state_file_cut_short_is_one_line_naming_it(tmp_path: Path) -> None:
    # a state file `neo4j start` did not write whole (a disk filled up, an edit) is refused
    # naming it, on every command that reads it, with no traceback
    state = tmp_path / "neo4j" / "state.json"
    state.parent.mkdir()
    for text in ('{"pid": 1, "bolt_po', '{"pid": 1}', "[]"):
        state.write_text(text)
        answer = run_cli("neo4j", "status", env={"OPENBOT_MEMORY_STATE_DIR": str(tmp_path)})
        assert answer.returncode == 1, answer.stderr
        assert "Traceback" not in answer.stderr
        assert answer.stderr.splitlines()[-1].startswith(
            f"openbot-memory: error: {state} is not the state `neo4j start` writes"), text


def test_a_bad_setting_is_one_line_naming_its_variable() -> None:
    bad = {
        ("OPENBOT_MEMORY_ITEM_RETENTION_DAYS", "-1"): "Input should be greater than 0",
        # a worker that would never look again
        ("OPENBOT_MEMORY_WORKER_POLL_SECONDS", "inf"): "Input should be a finite number",
        ("OPENBOT_MEMORY_DEFAULT_MODEL", "gpt-4o"): "a model is `builtin` or `openai:<model name>`",
        ("OPENBOT_MEMORY_WORKERS", "two"):
            "Input should be a valid integer, unable to parse string as an integer",
    }
    for (name, value), rule in bad.items():
        answer = run_cli("schema", env={name: value})
        assert answer.returncode == 1, (name, answer.stdout[:200])
        assert answer.stderr.splitlines() == [
            f"openbot-memory: error: {name} is {value!r}: {rule}"], answer.stderr
        assert answer.stdout == ""


def test_an_empty_setting_is_one_left_unset() -> None:
    # `NAME=` in a .env or compose file: the setting takes its default
    answer = run_cli("schema", env={"OPENBOT_MEMORY_ITEM_RETENTION_DAYS": "",
                                    "OPENBOT_MEMORY_WORKERS": ""})
    assert answer.returncode == 0, answer.stderr
    assert answer.stdout == (Path(ROOT) / "schema.graphql").read_text()


def test_a_port_out_of_range_is_refused_before_anything_starts() -> None:
    for port in ("70000", "-1", "http"):
        answer = run_cli("serve", "--port", port, env={"NEO4J_URI": "bolt://127.0.0.1:1"})
        assert answer.returncode == 2, port
        assert "Traceback" not in answer.stderr
        assert answer.stderr.splitlines()[-1] == (
            f"openbot-memory serve: error: argument --port: {port} is not a port (0 to 65535)")


def test_a_token_lifetime_out_of_range_is_refused_before_anything_starts() -> None:
    # a bad value for a flag is a usage error naming the flag (exit 2), told before the command
    # reaches Neo4j (none answers at this address)
    for days, why in (("0", "expires is a number of days above 0 and at most 36500"),
                      ("40000", "expires is a number of days above 0 and at most 36500"),
                      ("nan", "expires is a number of days above 0 and at most 36500"),
                      ("soon", None)):
        answer = run_cli("token", "create", "--org", "acme", "--person", "ana", "--expires", days,
                         env={"NEO4J_URI": "bolt://127.0.0.1:1"})
        assert answer.returncode == 2, days
        reason = f"{days}: {why}" if why else f"{days} is not a number of days"
        assert answer.stderr.splitlines()[-1] == (
            f"openbot-memory token create: error: argument --expires: {reason}")


def test_a_prefixed_neo4j_or_openai_setting_is_one_line_naming_the_one_read() -> None:
    # OPENBOT_MEMORY_NEO4J_URI is no setting: read as none, serve would start the local Neo4j
    for name, setting in (("OPENBOT_MEMORY_NEO4J_URI", "NEO4J_URI"),
                          ("OPENBOT_MEMORY_OPENAI_API_KEY", "OPENAI_API_KEY")):
        answer = run_cli("schema", env={name: "x"})
        assert answer.returncode == 1, name
        assert answer.stderr.splitlines() == [
            f"openbot-memory: error: {name} is not read: the setting is {setting}, without "
            "the OPENBOT_MEMORY_ prefix"
        ]
        assert answer.stdout == ""


def test_a_tracing_exporter_the_service_lacks_is_one_line_before_anything_starts() -> None:
    # a bad setting is one line naming it (exit 1), told before serve reaches Neo4j
    answer = run_cli("serve", env={"NEO4J_URI": "bolt://127.0.0.1:1",
                                   "OTEL_TRACES_EXPORTER": "otlp,zipkin"})
    assert answer.returncode == 1
    assert "Traceback" not in answer.stderr
    assert answer.stderr.splitlines() == [
        "openbot-memory: error: OTEL_TRACES_EXPORTER names an exporter this service lacks: "
        "zipkin (otlp, console or none)"]
    # with the SDK switched off, no exporter is read: serve goes on to reach Neo4j
    disabled = run_cli("serve", env={"NEO4J_URI": "bolt://127.0.0.1:1",
                                     "OTEL_TRACES_EXPORTER": "zipkin", "OTEL_SDK_DISABLED": "true"})
    assert "OTEL_TRACES_EXPORTER" not in disabled.stderr


def test_import_of_what_is_not_an_export_is_one_line(tmp_path: Path) -> None:
    headerless = tmp_path / "headerless.jsonl"
    headerless.write_text('{"format": "openbot-memory-export", "version": 1, "org": "acme"}\n')
    cases = {
        str(tmp_path / "nope.jsonl"): f"cannot read {tmp_path / 'nope.jsonl'}: "
                                      "No such file or directory",
        str(tmp_path): f"cannot read {tmp_path}: Is a directory",
        str(headerless): f"{headerless} is not an openbot-memory export",
    }
    for path, message in cases.items():
        answer = run_cli("import", path, env={"NEO4J_URI": "bolt://127.0.0.1:1"})
        assert answer.returncode == 1, path
        assert answer.stderr.splitlines() == [f"openbot-memory: error: {message}"], path


def test_import_into_a_name_no_token_could_be_made_for_is_refused_before_it_connects(
    tmp_path: Path,
) -> None:
    # the org's name is checked as `token create` checks it, before anything connects (the
    # database here answers nothing): an org no token could be made for would be no one's
    header = {"format": "openbot-memory-export", "version": 1, "nodes": 0, "relationships": 0}
    export = tmp_path / "acme.jsonl"
    export.write_text(json.dumps({**header, "org": "acme"}) + "\n")
    named = tmp_path / "named.jsonl"
    named.write_text(json.dumps({**header, "org": "a/b"}) + "\n")
    for path, org in ((export, "bad name"), (export, ""), (named, None)):
        answer = run_cli("import", str(path), *(["--org", org] if org is not None else []),
                         env={"NEO4J_URI": "bolt://127.0.0.1:1"})
        assert answer.returncode == 1, org
        assert answer.stderr.splitlines()[-1].startswith("openbot-memory: error: org is a name"), (
            org, answer.stderr)
