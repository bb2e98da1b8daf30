"""Tokens from the command line: list (ids, never the token), revoke by token or id, expire
after DAYS; a revoked or expired token is 401 within seconds (lookups are cached briefly), and a
token's last use is recorded."""

from __future__ import annotations

import time

import httpx

from app.store.database import Target
from tests.conftest import Graph, RunningServer
from tests.test_cli import run_cli


def cli(target: Target, *args: str) -> str:
    answer = run_cli(*args, env={"NEO4J_URI": target.uri, "NEO4J_USER": target.user,
                                 "NEO4J_PASSWORD": target.password})
    assert answer.returncode == 0, answer.stderr
    return answer.stdout


def status(server: RunningServer, token: str) -> tuple[int, str]:
    answer = httpx.get(f"{server.url}/v1/agents", headers={"Authorization": f"Bearer {token}"})
    return answer.status_code, answer.json().get("message", "") if answer.status_code else ""


def refused_soon(server: RunningServer, token: str) -> tuple[int, str]:
    """The answer once the server stops taking the token: it must within the token cache's few
    seconds (this server's `token_cache_seconds` is the default, 2 s), and then for good."""
    deadline = time.monotonic() + server.settings.token_cache_seconds + 10
    while (answer := status(server, token))[0] == 200 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert status(server, token) == answer
    return answer


def test_list_revoke_and_expire_tokens(
    neo4j_target: Target, graph: Graph, server: RunningServer
) -> None:
    ana = cli(neo4j_target, "token", "create", "--org", "acme", "--person", "ana").strip()
    ben = cli(neo4j_target, "token", "create", "--org", "acme", "--person", "ben",
              "--expires", "1").strip()
    platform = cli(neo4j_target, "token", "create", "--org", "acme",
                   "--service", "platform").strip()
    other = cli(neo4j_target, "token", "create", "--org", "globex", "--person", "olaf").strip()
    for token in (ana, ben, platform, other):
        assert status(server, token)[0] == 200

    listed = cli(neo4j_target, "token", "list", "--org", "acme")
    header, *rows = listed.strip().splitlines()
    assert header.split()[:4] == ["id", "kind", "name", "created"]
    assert sorted((row.split()[1], row.split()[2]) for row in rows) == [
        ("person", "ana"), ("person", "ben"), ("service", "platform")]
    for token in (ana, ben, platform, other):  # never a token, never its hash
        assert token not in listed
    [hashed] = graph.rows("MATCH (t:Token)-[:GRANTS]->(:Person {id: 'ana'}) RETURN t.hash AS h")
    assert hashed["h"] not in listed
    # each was used once above: its last use is there, not a dash
    assert all(row.split()[4] != "-" for row in rows), listed
    # ben's expires in a day
    [expires] = graph.rows("MATCH (t:Token)-[:GRANTS]->(:Person {id: 'ben'}) "
                           "RETURN t.expiresAt - t.createdAt AS days")
    assert expires["days"] == 86_400_000

    # revoke by id (from the list) and by the token itself (in another process): 401 within seconds
    ana_id = next(row.split()[0] for row in rows if row.split()[2] == "ana")
    assert cli(neo4j_target, "token", "revoke", ana_id).strip() == f"revoked {ana_id}"
    assert refused_soon(server, ana) == (401, "this token was revoked")
    cli(neo4j_target, "token", "revoke", platform)
    assert refused_soon(server, platform) == (401, "this token was revoked")
    assert status(server, other)[0] == 200  # the others still work
    revoked = cli(neo4j_target, "token", "list", "--org", "acme")
    assert sum(row.split()[-1] != "-" for row in revoked.strip().splitlines()[1:]) == 2

    # ben's token past its time: 401, as soon as the clock passes it
    graph.rows("MATCH (t:Token)-[:GRANTS]->(:Person {id: 'ben'}) "
               "SET t.expiresAt = timestamp() - 1")
    assert refused_soon(server, ben) == (401, "this token has expired")

    # an unknown token or id is a one-line error
    answer = run_cli("token", "revoke", "tok-nope", env={
        "NEO4J_URI": neo4j_target.uri, "NEO4J_PASSWORD": neo4j_target.password})
    assert answer.returncode == 1
    assert answer.stderr.startswith("openbot-memory: error: no such token")


def test_last_use_is_written_at_most_once_a_minute(
    neo4j_target: Target, graph: Graph, server: RunningServer
) -> None:
    token = cli(neo4j_target, "token", "create", "--org", "acme", "--person", "ana").strip()
    assert status(server, token)[0] == 200
    first = graph.value("MATCH (t:Token) RETURN t.lastUsedAt")
    time.sleep(0.01)
    for _ in range(3):
        assert status(server, token)[0] == 200
    assert graph.value("MATCH (t:Token) RETURN t.lastUsedAt") == first
    # a minute later (the last use moved back), a request records it again: the first one
    # after the token's cached lookup (a few seconds) has gone
    graph.rows("MATCH (t:Token) SET t.lastUsedAt = t.lastUsedAt - 61000")
    deadline = time.monotonic() + server.settings.token_cache_seconds + 10
    while graph.value("MATCH (t:Token) RETURN t.lastUsedAt") < first:
        assert time.monotonic() < deadline, "the last use was not recorded again"
        assert status(server, token)[0] == 200
        time.sleep(0.1)
    assert graph.value("MATCH (t:Token) RETURN t.lastUsedAt") > first


def test_listing_the_tokens_of_an_org_not_there_says_so(
    neo4j_target: Target, graph: Graph
) -> None:
    # a mistyped org is told, not answered with an empty table
    cli(neo4j_target, "token", "create", "--org", "acme", "--person", "ana")
    answer = run_cli("token", "list", "--org", "acmee",
                     env={"NEO4J_URI": neo4j_target.uri, "NEO4J_USER": neo4j_target.user,
                          "NEO4J_PASSWORD": neo4j_target.password})
    assert answer.returncode == 1
    assert answer.stderr.strip() == (
        "openbot-memory: error: there is no org 'acmee' in this database")
    assert answer.stdout == ""
