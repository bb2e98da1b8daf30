"""Limits with clear errors: body size (413 before the read), JSON nesting (400 on `body`),
GraphQL tokens and cost (each with its code), and GET on /graphql for queries only."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
from graphql import get_introspection_query

from app.api.graphql.limits import CACHED_LENGTH, ParsedOnce, ValidatedOnce
from app.config import Settings
from app.memory.changes.commands import MAX_DEPTH
from tests.conftest import Api, RunningServer, flat

EIGHT_MIB = 8 * 1024 * 1024
MAX_COST = Settings().graphql_max_cost
MAX_TOKENS = Settings().graphql_max_tokens


def raw_request(url: str, head: str, timeout: float = 10) -> tuple[int, dict[str, str], Any]:
    """Send only a request's head (no body) on a socket; the status, headers and JSON body."""
    parts = urlsplit(url)
    with socket.create_connection((parts.hostname, parts.port), timeout=timeout) as sock:
        sock.sendall(head.encode())
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        top, _, rest = data.partition(b"\r\n\r\n")
        lines = top.decode().split("\r\n")
        headers = {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
        length = int(headers.get("content-length", "0"))
        while len(rest) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            rest += chunk
    return int(lines[0].split()[1]), headers, json.loads(rest)


def test_a_body_declared_over_8_mib_is_413_before_any_of_it_is_sent(api: Api) -> None:
    session = api.session()["session"]["id"]
    head = (
        f"POST /v1/sessions/{session}/turns HTTP/1.1\r\nHost: x\r\n"
        f"Authorization: Bearer {api.token}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {50 * 1024 * 1024}\r\n\r\n"
    )
    started = time.monotonic()
    status, headers, body = raw_request(str(api.http.base_url), head)
    # the answer came though not one byte of the 50 MB was sent: nothing was read
    assert status == 413
    assert time.monotonic() - started < 5
    assert body["_tag"] == "PayloadTooLarge"
    assert str(EIGHT_MIB) in body["message"]
    assert body["requestId"] == headers["x-request-id"]
    # and a body just under the limit is read as usual (here: a 400 on its field, not a 413)
    padded = {"items": [{"type": "message", "role": "user", "content": "x" * (EIGHT_MIB - 200)}]}
    answer = api.post(f"/v1/sessions/{session}/turns", padded)
    assert answer.status_code == 400, answer.text
    assert answer.json()["field"] == "items.0.content"


def test_mcp_reads_a_body_up_to_the_service_limit_as_rest_does(api: Api) -> None:
    # a call over the MCP SDK's own 4 MiB default and under the service's 8 MiB limit is
    # read and answered (here: the tool's refusal of its argument), as REST reads it
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "search_memory", "arguments": {"query": "x" * (5 * 1024 * 1024)}}}
    answer = api.http.post("/mcp", json=call,
                           headers={"Accept": "application/json, text/event-stream"})
    assert answer.status_code == 200, answer.text[:300]
    result = answer.json()["result"]
    assert result["isError"] is True
    [content] = result["content"]
    refused = json.loads(content["text"][content["text"].index("{"):])
    assert (refused["_tag"], refused["field"]) == ("ValidationError", "query")


def chunks(total: int, size: int = 1024) -> Iterator[bytes]:
    sent = 0
    yield b'{"name": "'
    while sent < total:
        yield b"x" * size
        sent += size
    yield b'"}'


def test_a_chunked_body_is_counted_as_it_streams(
    start_server: Callable[..., RunningServer], api: Api
) -> None:
    small = start_server(max_body_bytes=4096)
    headers = {"Authorization": f"Bearer {api.token}", "Content-Type": "application/json"}
    with httpx.Client(base_url=small.url, headers=headers, timeout=30) as http:
        # no Content-Length: httpx sends a generator chunked
        over = http.post("/v1/agents", content=chunks(64 * 1024))
        assert over.status_code == 413, over.text
        assert over.json()["_tag"] == "PayloadTooLarge"
        under = http.post("/v1/agents", content=chunks(150, size=50))
        assert under.status_code == 201, under.text
        # GraphQL reads its body through the same limit
        query = {"query": "{ agents { nodes { id } } }", "variables": {"pad": "x" * 8000}}
        graphql = http.post("/graphql", json=query)
        assert graphql.status_code == 413, graphql.text
        assert graphql.json()["_tag"] == "PayloadTooLarge"
        # and so does MCP, whose SDK would answer a failed read with a JSON-RPC 500
        mcp = {"Accept": "application/json, text/event-stream"}
        over = http.post("/mcp", content=chunks(64 * 1024), headers=mcp)
        assert over.status_code == 413, over.text
        assert over.json()["_tag"] == "PayloadTooLarge"
        assert over.json()["requestId"] == over.headers["x-request-id"]
        initialize = json.dumps({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "test", "version": "0"}},
        }).encode()
        under = http.post("/mcp", content=iter([initialize[:50], initialize[50:]]), headers=mcp)
        assert under.status_code == 200, under.text
        assert under.json()["result"]["serverInfo"]["name"] == "openbot-memory"


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_json_nested_too_deep_is_400_on_body(api: Api) -> None:
    session = api.session()["session"]["id"]
    for depth in (MAX_DEPTH + 1, 100_000):
        body = '{"items": ' + nested(depth) + "}"
        answer = api.http.post(
            f"/v1/sessions/{session}/turns", content=body,
            headers={"Content-Type": "application/json"},
        )
        assert answer.status_code == 400, (depth, answer.text)
        assert answer.json()["_tag"] == "ValidationError"
        assert answer.json()["field"] == "body"
        assert f"deeper than {MAX_DEPTH}" in answer.json()["message"]
    # within the limit it is an ordinary validation error of the field
    answer = api.http.post(
        f"/v1/sessions/{session}/turns", content='{"items": ' + nested(MAX_DEPTH - 1) + "}",
        headers={"Content-Type": "application/json"},
    )
    assert answer.status_code == 400
    assert answer.json()["field"].startswith("items")


def test_graphql_variables_nested_too_deep_are_400_on_body(api: Api) -> None:
    body = '{"query": "{ agents { nodes { id } } }", "variables": {"x": ' + nested(100_000) + "}}"
    answer = api.http.post("/graphql", content=body, headers={"Content-Type": "application/json"})
    assert answer.status_code == 400, answer.text
    assert answer.json()["_tag"] == "ValidationError"
    assert answer.json()["field"] == "body"
    # and in a GET's query string too, on the parameter (a GET has no body)
    answer = api.get("/graphql", params={"query": "{ agents { nodes { id } } }",
                                         "variables": nested(5000)})
    assert answer.status_code == 400, answer.text
    assert answer.json()["field"] == "variables"


def test_a_document_over_the_token_limit_is_query_too_large(api: Api) -> None:
    fields = " ".join(f"a{n}: __typename" for n in range(MAX_TOKENS // 3 + 10))
    answer = flat(api.graphql("{ " + fields + " }"))
    [error] = answer["errors"]
    assert error["extensions"]["code"] == "QUERY_TOO_LARGE", error
    assert answer["data"] is None
    # a comment flood is bounded too
    answer = flat(api.graphql("{ agents { nodes { id } } }\n" + "#\n" * 100_000))
    assert answer["errors"][0]["extensions"]["code"] == "QUERY_TOO_LARGE"
    # and so is a subscription over the limit: it is no larger a read for being one
    answer = flat(api.graphql('subscription { runFinished(sessionId: "ses-1") { id '
                              + " ".join(["__typename"] * MAX_TOKENS) + " } }"))
    assert answer["errors"][0]["extensions"]["code"] == "QUERY_TOO_LARGE"


STORY = """
query Story($id: ID!) {
  session(id: $id) {
    head revision
    memory { entries(first: 20) { totalCount nodes {
      key content status sources { id content turn { id model session { id } } }
      changes { nodes { op maker madeBy before: beforeContent content at run { model read } } }
    } } }
    runs(first: 5) { nodes { status error read dropped { key reason } changes { key content } } }
    versions { nodes { id cause current } }
    items(first: 10) {
      edges { cursor node { id type content } } pageInfo { hasNextPage endCursor }
    }
    agent { name sessions { nodes { id } } }
  }
}
"""


def test_cost_counts_list_sizes_and_refuses_what_multiplies(api: Api) -> None:
    session = api.session()["session"]["id"]
    # the README's story of a session is well within the limit
    story = flat(api.graphql(STORY, id=session))
    assert "errors" not in story, story
    assert story["data"]["session"]["revision"] >= 0
    # pages multiply: 200 agents x 200 sessions x their entries and sources
    costly = """{ agents(first: 200) { nodes { sessions(first: 200) { nodes {
                  id memory { entries { nodes { key sources { id } } } } } } } } }"""
    answer = flat(api.graphql(costly))
    [error] = answer["errors"]
    assert error["extensions"]["code"] == "QUERY_TOO_COSTLY", error
    assert error["extensions"]["cost"] > MAX_COST
    assert answer["data"] is None
    # the same shape with small pages runs
    cheap = ("{ agents(first: 5) { nodes { sessions(first: 5) { nodes {"
             " id memory { entries { nodes { key } } } } } } } }")
    assert "errors" not in flat(api.graphql(cheap))
    # a variable page counts as the largest page
    answer = flat(api.graphql(
        "query($n: Int!) { agents(first: $n) { nodes { sessions(first: $n) { nodes {"
        " memory { entries { nodes { sources { id } } } } } } } } }", n=1,
    ))
    assert answer["errors"][0]["extensions"]["code"] == "QUERY_TOO_COSTLY"
    # fragments are counted where they are spread
    fragment = """query { agents(first: 200) { nodes { ...A } } }
                  fragment A on Agent { sessions(first: 200) { nodes {
                  memory { entries { nodes { key sources { id } } } } } } }"""
    assert flat(api.graphql(fragment))["errors"][0]["extensions"]["code"] == "QUERY_TOO_COSTLY"
    # search's hits are the page its `first` asked for, counted once: the largest page of
    # hits with the largest page of each one's changes loads as much as entries would, and runs
    hits = ('{ search(query: "budget", first: 100) { hits { entry { key '
            "changes(first: 200) { nodes { op maker at } } } } } }")
    assert "errors" not in flat(api.graphql(hits))


def test_a_document_12_levels_below_its_root_field_runs_and_one_13_below_is_refused(
    api: Api,
) -> None:
    # docs/reference/graphql.md: a depth of 12 levels of nested fields below a root field
    def levels(n: int) -> str:
        chain = ["agent(id: $a)"] + [("sessions(first: 1)", "nodes", "agent")[k % 3]
                                      for k in range(n - 2)] + ["__typename"]
        return "query($a: ID!) { " + " { ".join(chain) + " }" * (n - 1) + " }"

    agent = api.agent()["id"]
    assert "errors" not in flat(api.graphql(levels(13), a=agent))
    [error] = flat(api.graphql(levels(14), a=agent))["errors"]
    assert "exceeds maximum operation depth of 12" in error["message"], error


def test_fragments_spread_twice_level_upon_level_are_refused_at_once(api: Api) -> None:
    # docs/reference/graphql.md: a fragment's fields count where it is spread, and each limit
    # measures a fragment once: 40 levels of fragments spreading the next twice expand to 2**40
    # fields, and the document is refused with the limits' codes, not expanded to count them
    levels = 40
    document = "query Q { ...F0 }\n" + "".join(
        f"fragment F{i} on Query {{ ...F{i + 1} ...F{i + 1} }}\n" for i in range(levels)
    ) + f"fragment F{levels} on Query {{ name: __typename }}"
    errors = flat(api.graphql(document))["errors"]
    assert [(e["message"], e["extensions"]["code"]) for e in errors] == [
        (f"{2**levels} aliases found. Allowed: 30", "QUERY_TOO_LARGE"),
        (f"The query may load about {2**levels} objects, more than the limit of 500000: ask "
         "for smaller pages or fewer nested lists.", "QUERY_TOO_COSTLY"),
    ]


def test_the_depth_and_alias_limits_answer_a_code_and_a_missing_fragment_is_named(
    api: Api,
) -> None:
    # docs/reference/errors.md: each limit's refusal carries its code
    chain = ['agent(id: "agt-1")'] + [("sessions(first: 1)", "nodes", "agent")[k % 3]
                                           for k in range(12)]
    deep = "{ " + " { ".join([*chain, "id"]) + " }" * 13 + " }"
    [error] = flat(api.graphql(deep))["errors"]
    assert error["extensions"] == {"code": "QUERY_TOO_DEEP", "limit": 12}
    assert error["message"] == "'anonymous' exceeds maximum operation depth of 12"
    many = "{ " + " ".join(f"a{i}: __typename" for i in range(31)) + " }"
    [error] = flat(api.graphql(many))["errors"]
    assert (error["message"], error["extensions"]) == (
        "31 aliases found. Allowed: 30", {"code": "QUERY_TOO_LARGE", "limit": 30})
    # a page size past any Int is GraphQL's own validation error, whatever its digits
    [error] = flat(api.graphql("{ agents(first: " + "9" * 5000 + ") { nodes { id } } }"))[
        "errors"]
    assert error["message"].startswith("Expected value of type 'Int'"), error
    assert error["locations"] == [{"line": 1, "column": 17}]
    # a spread of a fragment the document lacks is GraphQL's own validation error
    [error] = flat(api.graphql("{ agents { nodes { ...Missing } } }"))["errors"]
    assert error["message"] == "Unknown fragment 'Missing'."
    assert error["locations"] == [{"line": 1, "column": 23}]  # the spread


def test_introspection_costs_as_every_field_does_and_reads_the_schema_once(api: Api) -> None:
    # docs/reference/graphql.md: each field counts, introspection's too. The whole schema as
    # GraphiQL and code generators ask for it runs.
    whole = flat(api.graphql(get_introspection_query(descriptions=True)))
    assert "errors" not in whole, whole["errors"]
    assert "Session" in {t["name"] for t in whole["data"]["__schema"]["types"]}
    # Its lists multiply as other lists do: six nested lists of types, fields and arguments
    # are refused before they run, as the same shape of connections is.
    nested = ("{ __schema { types { fields { args { type { fields { args { type {"
              " enumValues { name } } } } } } } } } }")
    [error] = flat(api.graphql(nested))["errors"]
    assert error["extensions"]["code"] == "QUERY_TOO_COSTLY", error
    assert error["extensions"]["cost"] > MAX_COST
    # The schema is read once per operation: each reading is the work of thousands of
    # fields, and aliases would ask for it again and again. Two operations of one document
    # may each read it (only one runs).
    twice = "{ a: __schema { types { name } } b: __schema { types { name } } }"
    [error] = flat(api.graphql(twice))["errors"]
    assert (error["message"], error["extensions"]) == (
        "__schema is asked for 2 times; an operation asks for it once",
        {"code": "QUERY_TOO_LARGE", "limit": 1})
    two = ("query A { __schema { queryType { name } } } "
           "query B { __schema { mutationType { name } } }")
    answer = api.post("/graphql", {"query": two, "operationName": "B"}).json()
    assert answer == {"data": {"__schema": {"mutationType": {"name": "Mutation"}}}}


def test_a_long_document_runs_and_is_kept_in_no_cache(api: Api) -> None:
    # The parsed and validated documents kept are short ones (a query holds a few thousand
    # characters); a long one (here by a long comment) is read each time it comes, so the
    # caches never hold 256 documents of megabytes.
    caches: list[Any] = [ParsedOnce().cached_parse_document,  # functools' lru_caches
                         ValidatedOnce().cached_validate_document]

    def calls() -> list[tuple[int, int]]:
        return [(cache.cache_info().hits, cache.cache_info().misses) for cache in caches]

    agent = api.agent("desk")["id"]
    before = calls()
    answer = flat(api.graphql("{ agents { nodes { id } } }\n# " + "x" * CACHED_LENGTH))
    assert answer == {"data": {"agents": [{"id": agent}]}}
    assert calls() == before
    # a short document is kept: its second reading is a hit
    api.graphql("{ agents { nodes { name } } }")
    again = calls()
    api.graphql("{ agents { nodes { name } } }")
    assert [hits for hits, _ in calls()] == [hits + 1 for hits, _ in again]


def test_get_on_graphql_runs_queries_only(api: Api, graph: Any) -> None:
    answer = api.get("/graphql", params={"query": "{ agents { nodes { id } } }"})
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"data": {"agents": {"nodes": []}}}
    mutation = 'mutation { forget(sessionId: "s", expected: "v", revision: 0, key: "k") { id } }'
    answer = api.get("/graphql", params={"query": mutation})
    assert answer.status_code == 405, answer.text
    assert answer.headers["allow"] == "POST"
    assert answer.json()["_tag"] == "MethodNotAllowed"
    assert answer.json()["requestId"] == answer.headers["x-request-id"]
    # the same mutation over POST runs (here: an expected NotFound)
    posted = flat(api.graphql(mutation))
    assert posted["errors"][0]["extensions"]["code"] == "NOT_FOUND"
    # nothing was written by the GET
    assert graph.value("MATCH (n:Change) RETURN count(n)") == 0
