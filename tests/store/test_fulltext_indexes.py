"""The full-text indexes are eventually consistent (a commit only queues its documents), and
search awaits their refresh: what was written before a search is found by it. A database whose
full-text indexes were made with other options has them made again at start."""

from __future__ import annotations

import asyncio

from neo4j.exceptions import ClientError, Neo4jError

from app.store.database import SEARCH_QUERY_FAILED, Database, Target, query_syntax_error
from tests.api.test_agent_memory import agent_remember
from tests.api.test_search import search
from tests.conftest import Api, Graph, RunningServer

ROUNDS = 100

OPTIONS = (
    "SHOW FULLTEXT INDEXES YIELD name, options "
    "RETURN name, options.indexConfig.`fulltext.eventually_consistent` AS eventual ORDER BY name"
)


def test_the_full_text_indexes_are_eventually_consistent(
    server: RunningServer, graph: Graph
) -> None:
    # the server applied the schema at its start
    assert graph.rows(OPTIONS) == [
        {"name": "agent_entry_text", "eventual": True},
        {"name": "change_text", "eventual": True},
    ]


def test_a_search_right_after_a_write_finds_it_every_time(api: Api, graph: Graph) -> None:
    sid = api.session()["session"]["id"]
    agent = api.agent("desk")["id"]
    missed = []
    for n in range(ROUNDS):
        word = f"word{n}x"
        # both indexes: session entries (change_text) and agent entries (agent_entry_text)
        if n % 2 == 0:
            api.remember(sid, f"k{n}", f"The {word} is noted.")
        else:
            agent_remember(api, agent, f"k{n}", f"The {word} is noted.")
        found = [hit["entry"]["key"] for hit in search(api, word)["hits"]]
        if found != [f"k{n}"]:
            missed.append((n, found))
    assert missed == []


def test_indexes_made_with_other_options_are_made_again_at_start(
    api: Api, graph: Graph, neo4j_target: Target
) -> None:
    sid = api.session()["session"]["id"]
    api.remember(sid, "budget", "The budget is 1500 EUR.")
    # the index as an older schema made it: synchronous (no OPTIONS)
    graph.rows("DROP INDEX change_text")
    graph.rows("CREATE FULLTEXT INDEX change_text FOR (c:Change) ON EACH [c.key, c.content]")
    graph.rows("CALL db.awaitIndex('change_text', 300)")
    assert {"name": "change_text", "eventual": False} in graph.rows(OPTIONS)

    async def start() -> None:
        db = await Database.connect(neo4j_target)
        try:
            await db.apply_schema()
            await db.apply_schema()  # once made again, it stays
        finally:
            await db.close()

    asyncio.run(start())
    assert graph.rows(OPTIONS) == [
        {"name": "agent_entry_text", "eventual": True},
        {"name": "change_text", "eventual": True},
    ]
    # what was written before is indexed again, and found
    assert [hit["entry"]["content"] for hit in search(api, "budget")["hits"]] == [
        "The budget is 1500 EUR."
    ]


def failed_search(message: str) -> ClientError:
    error = Neo4jError._hydrate_neo4j(code=SEARCH_QUERY_FAILED, message=message)
    assert isinstance(error, ClientError)
    return error


def test_only_the_querys_own_regular_expression_is_the_clients_fault() -> None:
    # a search fails past Lucene's parser for a /regular expression/ it cannot compile (the
    # client's query), and for an index being made again (the service's moment)
    procedure = "Failed to invoke procedure `db.index.fulltext.queryNodes`: Caused by: "
    bad_regexp = failed_search(procedure + "java.lang.IllegalArgumentException: unexpected end")
    refused = query_syntax_error(bad_regexp, "/[/")
    assert refused is not None
    assert (refused.field, refused.message) == (
        "query", "the search query cannot be parsed: a regular expression in it is not valid: "
        "unexpected end")
    missing = failed_search(
        procedure + "java.lang.IllegalArgumentException: There is no such fulltext schema "
        "index: change_text")
    assert query_syntax_error(missing, "/a/") is None
    assert query_syntax_error(missing, "budget") is None
