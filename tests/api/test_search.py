"""Full-text search: ranking (an exact key first), filters, paging, bad queries, and
what each caller may find: the caller's org, a person's own sessions, the current entries only
(forks and reverts included), never another member's private agent entries."""

from __future__ import annotations

import string
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from tests.api import test_mcp
from tests.api.test_agent_memory import agent_forget, agent_remember
from tests.api.test_erasure import reverted_fork
from tests.conftest import Api, Graph, RunningServer, flat

Body = dict[str, Any]


def search(api: Api, q: str, **params: Any) -> Body:
    body: Body = api.ok(api.get("/v1/search", params={"q": q, **params}))
    return body


def keys(body: Body) -> list[str]:
    return [hit["entry"]["key"] for hit in body["hits"]]


def contents(body: Body) -> list[str]:
    return [hit["entry"]["content"] for hit in body["hits"]]


def test_a_hit_is_the_entry_view_with_its_session_score_and_snippet(
    api: Api, graph: Graph
) -> None:
    sid = api.session()["session"]["id"]
    api.remember(sid, "budget", "The trip budget is 1500 EUR.")
    [hit] = search(api, "budget")["hits"]
    entry = api.view(sid)["memory"]["entries"]["budget"]
    assert hit["entry"] == {**entry, "session": sid}
    assert hit["listedAs"] == "budget"
    assert hit["score"] > 0
    assert hit["snippet"] == "The trip **budget** is 1500 EUR."


def test_an_agent_hit_is_the_agent_entry_view_with_its_agent(api: Api, graph: Graph) -> None:
    agent = api.agent("desk")["id"]
    memory = agent_remember(api, agent, "refunds", "Book refundable fares only.")
    [hit] = search(api, "refundable")["hits"]
    assert hit["entry"] == {**memory["entries"]["refunds"], "agent": agent}
    assert hit["snippet"] == "Book **refundable** fares only."


def test_an_exact_key_match_ranks_first(api: Api, graph: Graph) -> None:
    sid = api.session()["session"]["id"]
    # Many mentions of the word score higher in Lucene than the entry whose key it is.
    api.remember(sid, "notes", "seat seat seat: the seat question, seat by seat, seats.")
    api.remember(sid, "seat", "Window, please.")
    api.remember(sid, "aisle", "An aisle seat for Ben.")
    found = search(api, "seat")
    assert keys(found)[0] == "seat"
    assert set(keys(found)) == {"seat", "notes", "aisle"}
    scores = [hit["score"] for hit in found["hits"][1:]]
    assert scores == sorted(scores, reverse=True)
    assert keys(search(api, "SEAT"))[0] == "seat"  # keys match whatever the case


def test_a_hits_score_and_rank_tell_nothing_of_what_others_wrote(
    api: Api, graph: Graph, server: RunningServer, tokens: Callable[[str, str], str]
) -> None:
    # A9, privacy: the full-text index holds every org's entries and every person's; a hit's
    # score and rank are reckoned from the entries the caller may read alone, so what another
    # org, or another member in their own sessions, writes moves neither
    sid = api.session()["session"]["id"]
    api.remember(sid, "deal", "The merger closes in May.")
    api.remember(sid, "plans", "A quiet week before the merger, then the merger party.")
    before = search(api, "merger quiet")
    assert keys(before) == ["plans", "deal"]
    assert before["hits"][0]["score"] > before["hits"][1]["score"] > 0
    other = Api(server.url, tokens("globex", "bea"))
    other_sid = other.session()["session"]["id"]
    for n in range(5):
        other.remember(other_sid, f"merger-{n}", f"Merger note {n}: the merger talks go on.")
    member = Api(server.url, tokens("acme", "ben"))
    member.remember(member.session()["session"]["id"], "quiet", "Quiet hours, quiet rooms.")
    assert len(search(other, "merger")["hits"]) == 5
    assert len(search(member, "quiet")["hits"]) == 1
    assert search(api, "merger quiet") == before


@pytest.mark.parametrize(
    ("key", "q"),
    [("travel/budget", "travel\\/budget"), ("user:name", "user\\:name"),
     ("window seat", '"window seat"'), ("todo!", "todo\\!")],
)
def test_a_key_lucene_reads_escaped_or_quoted_is_an_exact_key_match(
    api: Api, graph: Graph, key: str, q: str
) -> None:
    # a key may hold what Lucene reads as syntax; the query that names it escaped, or quoted
    # as a phrase, is an exact key match, ranked first
    sid = api.session()["session"]["id"]
    words = key.replace("/", " ").replace(":", " ").replace("!", " ")
    api.remember(sid, "notes", f"{words} {words} {words}: more {words}, and {words}.")
    api.remember(sid, key, "Kept under a key of Lucene's syntax.")
    found = search(api, q)
    assert keys(found)[0] == key, found
    hits = api.graphql(SEARCH, q=q, first=5)["data"]["search"]["hits"]
    assert (hits[0]["key"], hits[0]["exactKey"]) == (key, True)
    assert [hit["exactKey"] for hit in hits[1:]] == [False] * (len(hits) - 1)


def test_only_the_current_entry_of_a_key_is_found(api: Api, graph: Graph) -> None:
    sid = api.session()["session"]["id"]
    api.remember(sid, "budget", "The budget is 1500 EUR.")
    api.remember(sid, "budget", "The budget is 2000 EUR.")
    assert contents(search(api, "budget")) == ["The budget is 2000 EUR."]
    assert search(api, "1500")["hits"] == []
    api.ok(api.command(sid, {"_tag": "Forget", "key": "budget"}))
    [hit] = search(api, "2000")["hits"]
    assert hit["entry"]["status"] == "retracted"  # the view holds retracted entries too (S2)


def test_forks_and_reverts_find_what_each_session_holds_now(api: Api, graph: Graph) -> None:
    sid = api.session()["session"]["id"]
    api.remember(sid, "budget", "The budget is 1500 EUR.")
    before = api.view(sid)["session"]
    fork = api.ok(api.post(f"/v1/sessions/{sid}/fork", {}), 201)["session"]["id"]
    api.remember(fork, "budget", "The budget is 900 EUR in the fork.")
    api.remember(sid, "budget", "The budget is 2000 EUR.")
    found = search(api, "budget")
    assert sorted((h["entry"]["session"], h["entry"]["content"]) for h in found["hits"]) == sorted(
        [(sid, "The budget is 2000 EUR."), (fork, "The budget is 900 EUR in the fork.")]
    )
    now = api.view(sid)["session"]
    api.ok(api.post(f"/v1/sessions/{sid}/revert",
                    {"expected": now["head"], "revision": now["revision"], "to": before["head"]}))
    assert search(api, "2000")["hits"] == []
    [hit] = search(api, "1500")["hits"]
    assert hit["entry"]["session"] == sid
    assert hit["entry"] == {**api.view(sid)["memory"]["entries"]["budget"], "session": sid}


def test_search_sees_the_callers_org_and_a_persons_own_sessions_only(
    api: Api, member: Api, platform: Api, other_org: Api, graph: Graph
) -> None:
    agent = api.agent("shared", shared=True)["id"]
    anas = api.session(agent)["session"]["id"]
    api.remember(anas, "budget", "Ana's budget is 1500 EUR.")
    bens = member.session(agent)["session"]["id"]
    member.remember(bens, "budget", "Ben's budget is 300 EUR.")
    olafs = other_org.session()["session"]["id"]
    other_org.remember(olafs, "budget", "Olaf's budget is 9 EUR.")
    assert contents(search(api, "budget")) == ["Ana's budget is 1500 EUR."]
    assert contents(search(member, "budget")) == ["Ben's budget is 300 EUR."]
    assert contents(search(other_org, "budget")) == ["Olaf's budget is 9 EUR."]
    assert sorted(contents(search(platform, "budget"))) == [
        "Ana's budget is 1500 EUR.", "Ben's budget is 300 EUR."
    ]
    # Naming a session one may not reach is 404, as on every session route.
    assert member.get("/v1/search", params={"q": "budget", "session": anas}).status_code == 404


def test_private_agent_entries_are_found_by_their_person_and_the_service_token_only(
    api: Api, member: Api, platform: Api, graph: Graph
) -> None:
    agent = api.agent("shared", shared=True)["id"]
    agent_remember(api, agent, "seat", "Ana prefers window seats.", "preference",
                   about="ana", visibility="private")
    agent_remember(api, agent, "trains", "Book trains before flights, seats reserved.")
    assert sorted(contents(search(api, "seats"))) == [
        "Ana prefers window seats.", "Book trains before flights, seats reserved."
    ]
    assert contents(search(member, "seats")) == ["Book trains before flights, seats reserved."]
    assert search(member, "window")["hits"] == []
    assert search(member, "ana")["hits"] == []
    assert len(search(platform, "seats")["hits"]) == 2
    # SPEC section 6: a shared entry of the same key as the person's own private one is a
    # second entry, found beside it.
    agent_remember(platform, agent, "seat", "Aisle seats for the team.", "preference")
    assert sorted(contents(search(api, "seat", agent=agent))) == [
        "Aisle seats for the team.", "Ana prefers window seats."]
    assert "Aisle seats for the team." in contents(search(api, "seats"))
    assert "Aisle seats for the team." in contents(search(member, "seats"))
    agent_forget(api, agent, "seat", about="ana")  # ana's private one is retracted, still hers
    assert "Ana prefers window seats." not in contents(search(member, "seats"))


def test_filters_by_session_and_agent(api: Api, graph: Graph) -> None:
    one, two = api.agent("one")["id"], api.agent("two")["id"]
    s1 = api.session(one)["session"]["id"]
    s2 = api.session(two)["session"]["id"]
    api.remember(s1, "hotel", "Hotel near the station.")
    api.remember(s2, "hotel", "Hotel near the beach.")
    agent_remember(api, one, "hotels", "Prefer hotels with breakfast.", "preference")
    assert {h["entry"].get("session") for h in search(api, "hotel", session=s1)["hits"]} == {s1}
    by_agent = search(api, "hotel OR hotels", agent=one)["hits"]
    assert sorted(h["entry"]["content"] for h in by_agent) == [
        "Hotel near the station.", "Prefer hotels with breakfast."
    ]
    assert len(search(api, "hotel OR hotels")["hits"]) == 3
    unknown = api.get("/v1/search", params={"q": "hotel", "agent": "agt-nope"})
    assert unknown.status_code == 404, unknown.text


def test_an_empty_filter_is_no_filter(server: RunningServer, api: Api, graph: Graph) -> None:
    # a form that leaves `session` or `agent` blank sends `?session=`: it searches everything
    one = api.agent("one")["id"]
    s1, s2 = api.session(one)["session"]["id"], api.session()["session"]["id"]
    api.remember(s1, "hotel", "Hotel near the station.")
    api.remember(s2, "hotel", "Hotel near the beach.")
    everything = search(api, "hotel")
    assert len(everything["hits"]) == 2
    assert search(api, "hotel", session="", agent="") == everything
    # MCP's search_memory reads an empty filter as REST does, and GraphQL's search as well
    found = test_mcp.answer(test_mcp.call(server, api.token, "search_memory", query="hotel",
                                          session_id="", agent_id=""))
    assert found == everything
    hits = api.graphql(SEARCH, q="hotel", first=5, session="", agent="")["data"]["search"]["hits"]
    assert sorted(h["entry"]["content"] for h in hits) == [
        "Hotel near the beach.", "Hotel near the station."
    ]


def test_limit_pages_best_first(api: Api, graph: Graph) -> None:
    sid = api.session()["session"]["id"]
    for n in range(5):
        api.remember(sid, f"city-{n}", f"City number {n} " + "city " * n)
    everything = search(api, "city")["hits"]
    assert len(everything) == 5
    assert search(api, "city", limit=2)["hits"] == everything[:2]
    bad = api.get("/v1/search", params={"q": "city", "limit": "0"})
    assert bad.status_code == 400
    assert bad.json()["field"] == "limit"


def test_offset_pages_through_every_hit_once_and_more_says_when_they_end(
    api: Api, graph: Graph
) -> None:
    # REST lists page with ?offset= and ?limit=: search too, with `more` for a page that is
    # not the last
    sid = api.session()["session"]["id"]
    for n in range(5):
        api.remember(sid, f"city-{n}", f"City number {n} " + "city " * n)
    everything = search(api, "city")
    assert everything["more"] is False
    pages = [search(api, "city", limit=2, offset=offset) for offset in (0, 2, 4)]
    assert [page["more"] for page in pages] == [True, True, False]
    assert [hit for page in pages for hit in page["hits"]] == everything["hits"]
    assert search(api, "city", offset=5) == {"hits": [], "more": False}
    bad = api.get("/v1/search", params={"q": "city", "offset": "-1"})
    assert (bad.status_code, bad.json()["field"]) == (400, "offset")


def test_hits_of_one_change_in_two_sessions_page_once_each(api: Api, graph: Graph) -> None:
    # a fork reverted to the version it was forked at holds its source's change: a hit in
    # each session, of equal score and change; paged one at a time, each comes once
    sid, fork = reverted_fork(api, "harbour", "The harbour opens at dawn.")
    everything = search(api, "harbour")
    assert sorted(hit["entry"]["session"] for hit in everything["hits"]) == sorted([sid, fork])
    pages = [search(api, "harbour", limit=1, offset=offset) for offset in (0, 1)]
    assert [hit for page in pages for hit in page["hits"]] == everything["hits"]


@pytest.mark.parametrize(
    "q", ["budget AND", "\"unclosed", "(budget", "key:[a TO", "", "   ", "x" * 501]
)
def test_a_bad_query_is_a_400_on_q(api: Api, graph: Graph, q: str) -> None:
    sid = api.session()["session"]["id"]
    api.remember(sid, "budget", "The budget is 1500 EUR.")
    response = api.get("/v1/search", params={"q": q})
    assert response.status_code == 400, response.text
    assert response.json()["_tag"] == "ValidationError"
    assert response.json()["field"] == "q"


def test_a_missing_q_is_a_400_and_no_token_is_a_401(
    api: Api, server: RunningServer, graph: Graph
) -> None:
    missing = api.get("/v1/search")
    assert missing.status_code == 400
    assert missing.json()["field"] == "q"
    assert httpx.get(f"{server.url}/v1/search?q=x").status_code == 401


SEARCH = """
query Search($q: String!, $first: Int!, $after: String, $kinds: [Kind!], $status: EntryStatus,
             $session: ID, $agent: ID) {
  search(query: $q, first: $first, after: $after, kinds: $kinds, status: $status,
         sessionId: $session, agentId: $agent) {
    hasNextPage endCursor
    hits { score exactKey snippet key cursor
           entry { key content kind status sources { id content }
                   changes(first: 5) { nodes { op maker content } } }
           agentEntry { key content visibility
                        changes(first: 5) { nodes { version maker content } } }
           session { id } agent { id } }
  }
}
"""


def test_graphql_search_ranks_pages_and_reaches_changes_and_sources(
    api: Api, graph: Graph
) -> None:
    agent = api.agent("desk")["id"]
    sid = api.session(agent)["session"]["id"]
    api.remember(sid, "rail", "Take the rail pass.", "decision")
    api.remember(sid, "rail", "Take the night train with the rail pass.", "decision")
    api.remember(sid, "pass", "The rail pass covers Austria.", "fact")
    agent_remember(api, agent, "rail-first", "Prefer rail over flights.", "preference")
    first = flat(api.graphql(SEARCH, q="rail", first=2))
    assert "errors" not in first, first
    page = first["data"]["search"]
    assert page["hasNextPage"] is True
    top = page["hits"][0]
    assert top["exactKey"] is True
    assert top["key"] == "rail"
    assert top["entry"]["content"] == "Take the night train with the rail pass."
    assert [c["content"] for c in top["entry"]["changes"]] == [
        "Take the night train with the rail pass.", "Take the rail pass."
    ]
    assert top["entry"]["sources"][0]["content"].startswith("Remember rail (decision)")
    assert top["session"] == {"id": sid}
    assert top["agent"] == {"id": agent}
    assert "**rail**" in top["snippet"]
    rest = flat(api.graphql(SEARCH, q="rail", first=2, after=page["endCursor"]))["data"]["search"]
    assert rest["hasNextPage"] is False
    everything = page["hits"] + rest["hits"]
    assert len(everything) == 3
    [agent_hit] = [h for h in everything if h["agentEntry"] is not None]
    assert agent_hit["agentEntry"]["changes"][0]["maker"] == "PERSON"
    assert agent_hit["session"] is None
    assert agent_hit["entry"] is None
    facts = flat(api.graphql(SEARCH, q="rail", first=10, kinds=["FACT"]))["data"]["search"]["hits"]
    assert [h["key"] for h in facts] == ["pass"]
    retracted = flat(api.graphql(SEARCH, q="rail", first=10, status="RETRACTED"))["data"]["search"]
    assert retracted["hits"] == []


@pytest.mark.parametrize(
    ("variables", "field"),
    [({"q": "rail AND"}, "query"), ({"q": "rail", "first": 0}, "first"),
     ({"q": "rail", "after": "nope"}, "after")],
)
def test_graphql_bad_arguments_are_validation_errors(
    api: Api, graph: Graph, variables: Body, field: str
) -> None:
    answer = flat(api.graphql(SEARCH, **{"first": 5, **variables}))
    [error] = answer["errors"]
    assert error["extensions"]["code"] == "VALIDATION_ERROR", error
    assert error["extensions"]["field"] == field


@pytest.mark.parametrize(
    ("arguments", "enum"),
    [("kinds: [story]", "Kind"), ("kinds: [fact]", "Kind"), ("status: gone", "EntryStatus")],
)
def test_graphql_names_outside_the_enums_are_graphqls_own_errors(
    api: Api, graph: Graph, arguments: str, enum: str
) -> None:
    answer = flat(api.graphql(f'{{ search(query: "rail", {arguments}) {{ hasNextPage }} }}'))
    assert answer.get("data") is None, answer
    [error] = answer["errors"]
    assert f"'{enum}'" in error["message"], error  # the schema's check, before the service


@pytest.mark.parametrize(
    "q",
    ["/[/", "a/(b/", "/a{2,1}/",
     "/(a|b)*a" + "(a|b)" * 16 + "/"],  # 2^16 states: past what Lucene builds of one
)
def test_a_regular_expression_lucene_refuses_is_a_400_on_q(api: Api, graph: Graph, q: str) -> None:
    # a /regex/ term is Lucene's too: one it cannot compile is the client's query at fault
    sid = api.session()["session"]["id"]
    api.remember(sid, "budget", "The budget is 1500 EUR.")
    response = api.get("/v1/search", params={"q": q})
    assert response.status_code == 400, response.text
    assert (response.json()["_tag"], response.json()["field"]) == ("ValidationError", "q")


@pytest.mark.parametrize(
    "q",
    ["budget^" + "9" * 40,  # a boost past the largest float
     "a*b" + "?" * 16 + "*c" * 40],  # a wildcard past what Lucene builds of one
)
def test_a_query_lucene_refuses_past_its_parser_is_a_400_on_q(
    api: Api, graph: Graph, q: str
) -> None:
    # SPEC 5: a query the index cannot run is the client's query at fault, as a parse error is
    sid = api.session()["session"]["id"]
    api.remember(sid, "budget", "The budget is 1500 EUR.")
    response = api.get("/v1/search", params={"q": q})
    assert response.status_code == 400, response.text
    assert (response.json()["_tag"], response.json()["field"]) == ("ValidationError", "q")


@pytest.mark.parametrize("joined", [" ", " AND "])
def test_a_query_lucene_expands_past_its_clause_limit_is_a_400_on_q(
    api: Api, graph: Graph, server: RunningServer, joined: str
) -> None:
    # SPEC 5: a fuzzy term is expanded to the index's terms near it; a query of many of them
    # over an index of many short terms expands past the clauses Lucene runs of one query
    sid = api.session()["session"]["id"]
    words = [a + b for a in string.ascii_lowercase for b in string.ascii_lowercase]
    api.remember(sid, "words", " ".join(words))
    q = joined.join(f"{c}~" for c in string.ascii_lowercase + string.digits)
    response = api.get("/v1/search", params={"q": q})
    assert response.status_code == 400, response.text
    body = response.json()
    assert (body["_tag"], body["field"]) == ("ValidationError", "q")
    assert "too many terms" in body["message"], body
    answer = flat(api.graphql("query($q: String!) { search(query: $q) { hasNextPage } }", q=q))
    [error] = answer["errors"]
    assert (error["extensions"]["code"], error["extensions"]["field"]) == (
        "VALIDATION_ERROR", "query"
    ), error
    refused = test_mcp.error(test_mcp.call(server, api.token, "search_memory", query=q))
    assert (refused["_tag"], refused["field"]) == ("ValidationError", "query"), refused


def test_status_keeps_the_entries_remembered_now_or_the_forgotten_ones(
    server: RunningServer, api: Api, graph: Graph
) -> None:
    # A10, S17: REST and MCP filter by status as GraphQL does; without it both are found
    sid = api.session()["session"]["id"]
    api.remember(sid, "seat", "Ana prefers window seats.")
    api.remember(sid, "car", "Ana wants a car with window tint.")
    api.ok(api.command(sid, {"_tag": "Forget", "key": "car"}))
    assert sorted(keys(search(api, "window"))) == ["car", "seat"]
    assert sorted(keys(search(api, "window", status=""))) == ["car", "seat"]  # as session=
    assert keys(search(api, "window", status="active")) == ["seat"]
    assert keys(search(api, "window", status="retracted")) == ["car"]
    bad = api.get("/v1/search", params={"q": "window", "status": "gone"})
    assert bad.status_code == 400, bad.text
    assert (bad.json()["_tag"], bad.json()["field"]) == ("ValidationError", "status")

    found = test_mcp.answer(test_mcp.call(server, api.token, "search_memory", query="window",
                                          status="retracted"))
    assert [hit["entry"]["key"] for hit in found["hits"]] == ["car"]
    refused = test_mcp.error(
        test_mcp.call(server, api.token, "search_memory", query="window", status="gone"))
    assert (refused["_tag"], refused["field"]) == ("ValidationError", "status")
