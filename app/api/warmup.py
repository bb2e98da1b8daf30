"""The warm-up at start, before `/readyz` says ready: a cold process and a cold Neo4j answer
the first requests many times slower than the next ones (Neo4j parses and plans each statement
on its first run, with a planner the JVM has not compiled yet, and its first commits and reads
of stored data are slow too; Python imports and builds what a route, the GraphQL schema or a
JSON encoder needs on its first call).

So the service first has Neo4j plan every statement of the catalog (EXPLAIN: nothing runs),
then rehearses the common requests (the README's walk-through in its order, with its
consolidation run and the agent's learning job, then agent memory, search, the nested and
provenance GraphQL views) through its own routes, in process, `warmup_rounds` times, each
round for an org of its own that is deleted (`delete_org`) at the end of the round. The
statements run with the parameters real requests send, and commit: their plans are cached as
those requests will look them up, and Neo4j's first commits and reads of stored data happen
before ready. On a new database each round finds the graph empty, as the first clients find
it, and grows it as they do, so the plans are made with the statistics their requests see, and
with parameters of the sizes theirs have (ORG_SIZE): Neo4j finds the plans fresh, and does not
plan them again. The warm-up orgs' model is the built-in
offline one whatever the service's default model is: the warm-up calls no other model.

A warm-up org is marked as one when it is made (`warmup` on its `Org` node), which no other org
ever is, whatever its id: an org id is any name a token was made for, so the id alone could be
a client's. A warm-up stopped midway (the process killed) leaves its org; the next start
deletes the warm-up orgs made more than LEFTOVER_SECONDS before it, before its own rounds
(a younger one may be another replica's warm-up under way)."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from starlette.types import ASGIApp

from app.config import Settings
from app.domain.jobs import PENDING
from app.errors import NotFound
from app.memory.access.orgs import delete_org, org_exists, warmup_orgs
from app.memory.access.tokens import Tokens
from app.memory.ids import now_ms
from app.memory.service import Service
from app.store.database import Database

log = logging.getLogger("openbot_memory")

BUILTIN = "builtin"  # the warm-up org's model: the built-in offline one
# Neo4j caches a plan for each size class of each string and list parameter (0, 1, up to 10, up
# to 100, ... characters or members): the warm-up's parameters are the sizes of common ones, so
# that their plans are the ones it made. An org id is as long as `acme` (up to 10 characters),
# an agent's name as `trip planner` (11 to 100).
ORG_SIZE = 10
AGENT_NAME = "warm-up agent"
LEARNING_SECONDS = 30.0  # how long the warm-up waits for its agent's learning job
# A warm-up org made this long before a start is a leftover of a warm-up that was stopped: no
# warm-up round lasts nearly as long (its longest wait is LEARNING_SECONDS).
LEFTOVER_SECONDS = 600

NESTED = """query Warm($id: ID!) {
  session(id: $id) { id head revision memory { entries(first: 20) { totalCount nodes {
    key content status updatedAt sources { id content turn { id model shown { session { key } } } }
    story { maker content change { id } cites { turnId item { id } } }
    changes { nodes { op maker beforeContent content at } } } } }
    runs(first: 5) { nodes { status read dropped { key reason } } }
    turns(first: 5) { nodes { id shown { session { key } agent { key } } } } } }"""
SUPPORTS = """query Supports($id: ID!, $key: String!) {
  session(id: $id) { memory { entry(key: $key) { sources { id
    supports { session { key changeId } agent { key changeId } } } } } } }"""


async def warm_up(
    settings: Settings, service: Service, app_for: Callable[[Service], ASGIApp]
) -> None:
    """Plan every statement, then rehearse the common requests `warmup_rounds` times, each
    round for a warm-up org of its own that is deleted at the end of the round."""
    started = time.perf_counter()
    planned = await service.db.plans.plan_catalog()
    leftovers, deleted = await delete_leftovers(service.db)
    app = app_for(service)
    requests = 0
    for _ in range(settings.warmup_rounds):
        sent, gone = await one_round(service.db, app)
        requests, deleted = requests + sent, deleted + gone
    log.info("warmed up in %.1f s: %d statements planned, %d requests rehearsed, "
             "%d nodes of the warm-up orgs deleted (%d left by an earlier start)",
             time.perf_counter() - started, planned, requests, deleted, leftovers)


async def delete_leftovers(db: Database) -> tuple[int, int]:
    """Delete the warm-up orgs that stopped warm-ups left (made LEFTOVER_SECONDS or more
    ago): how many orgs, how many nodes."""
    orgs = nodes = 0
    before = now_ms() - LEFTOVER_SECONDS * 1000
    for org in await warmup_orgs(db, before):
        if org not in await warmup_orgs(db, before):  # a client's token took the mark away
            continue
        try:
            nodes += await delete_org(db, org, lambda n: None)
        except NotFound:  # another replica's start deleted it first
            continue
        orgs += 1
    return orgs, nodes


async def one_round(db: Database, app: ASGIApp) -> tuple[int, int]:
    """The common requests for a new org, which is deleted afterwards (whatever happened):
    how many requests, how many nodes deleted. Each round leaves the graph as it found it, so
    Neo4j plans each statement with the statistics of a graph that holds a walk-through's
    nodes, as a fresh service's first clients see it: their requests find the plans fresh."""
    org = f"warmup{uuid.uuid4().hex}"[:ORG_SIZE]
    while await org_exists(db, org):  # never an org of the service's clients
        org = f"warmup{uuid.uuid4().hex}"[:ORG_SIZE]
    token = await Tokens(db, BUILTIN).create(org, "warmup", warmup=True)
    if org not in await warmup_orgs(db, now_ms() + 1):  # a client's org made meanwhile
        raise RuntimeError(f"the warm-up's org {org} was made by another")
    try:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://warm-up",
            headers={"Authorization": f"Bearer {token}"},
        ) as client:
            sent = await rehearse(client)
    finally:
        deleted = 0
        if org in await warmup_orgs(db, now_ms() + 1):  # else a client's token took the mark
            deleted = await delete_org(db, org, lambda n: None)
    return sent, deleted


async def rehearse(client: httpx.AsyncClient) -> int:
    """The common requests, each answered as a client would see it; how many."""
    sent = 0

    async def call(method: str, path: str, body: Any = None, **params: Any) -> Any:
        nonlocal sent
        sent += 1
        answer = await client.request(method, path, json=body, params=params or None)
        if answer.status_code >= 400:
            raise RuntimeError(f"{method} {path}: {answer.status_code} {answer.text[:300]}")
        return answer.json()

    async def command(view: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        session = view["session"]
        answer: dict[str, Any] = await call(
            "POST", f"/v1/sessions/{session['id']}/memory",
            {"expected": session["head"], "revision": session["revision"], "command": body},
        )
        return answer

    # the README's walk-through, in its order
    agent = (await call("POST", "/v1/agents", {"name": AGENT_NAME}))["id"]
    view = await call("POST", "/v1/sessions", {"agent": agent})
    sid = view["session"]["id"]
    items = [
        {"type": "message", "role": "user",
         "content": "Hi, my name is Ana. Our budget is 1500 EUR. I prefer window seats."},
        {"type": "message", "role": "assistant", "content": "Noted."},
    ]
    await call("POST", f"/v1/sessions/{sid}/turns", {"items": items}, wait=30)
    await call("GET", f"/v1/sessions/{sid}/memory")
    await call("GET", f"/v1/sessions/{sid}/instructions")
    view = await call("GET", f"/v1/sessions/{sid}")
    view = await command(view, {"_tag": "Forget", "key": "budget"})
    # then the other common requests
    await call("GET", "/openapi.json")
    view = await command(view, {"_tag": "Remember", "key": "budget", "content": "1500 EUR.",
                                "kind": "fact"})
    view = await command(view, {"_tag": "Remember", "key": "seat", "content": "Window.",
                                "kind": "preference"})
    view = await command(view, {"_tag": "Configure", "generate": False})
    await call("GET", f"/v1/sessions/{sid}/runs")
    await call("GET", f"/v1/sessions/{sid}/versions")
    await call("GET", "/v1/sessions")
    await call("GET", "/v1/agents")
    # the turn's learning job moves the agent memory's version: it ends before the version is
    # read for the Remember that expects it
    await learned(call, agent)
    memory = await call("GET", f"/v1/agents/{agent}/memory")
    await call("POST", f"/v1/agents/{agent}/memory", {
        "expected": memory["version"],
        "command": {"_tag": "Remember", "key": "tone", "content": "Short answers.",
                    "kind": "preference"},
    })
    await call("GET", f"/v1/agents/{agent}/memory/log")
    await call("GET", "/v1/search", q="window")
    for query, variables in ((NESTED, {"id": sid}), (SUPPORTS, {"id": sid, "key": "seat"})):
        answer = await call("POST", "/graphql", {"query": query, "variables": variables})
        if answer.get("errors"):
            raise RuntimeError(f"GraphQL: {answer['errors']}")
    return sent


async def learned(call: Callable[..., Awaitable[Any]], agent: str) -> None:
    """Wait until the agent's learning jobs have ended (the consolidation run of a turn queues
    one), for at most LEARNING_SECONDS."""
    deadline = time.monotonic() + LEARNING_SECONDS
    while time.monotonic() < deadline:
        jobs = (await call("GET", f"/v1/agents/{agent}/learning"))["jobs"]
        if all(job["status"] not in PENDING for job in jobs):
            return
        await asyncio.sleep(0.05)
