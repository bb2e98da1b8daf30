"""The warm-up at start, before `/readyz` says ready: a cold process and a cold Neo4j answer
the first requests many times slower than the next ones (Neo4j parses and plans each statement
on its first run, with a planner the JVM has not compiled yet; Python imports and builds what a
route, the GraphQL schema or a JSON encoder needs on its first call).

So the service first has Neo4j plan every statement of the catalog (EXPLAIN: nothing runs),
then rehearses the common requests (the README's walk-through, agent memory, search, the nested
and provenance GraphQL views) through its own routes, in process, for an org of its own, on a
database whose every operation runs in one transaction that is rolled back
(`Database.rehearsal`): the statements run with the parameters real requests send, so their
plans are cached as those requests will look them up, and nothing is written."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

import httpx
from starlette.types import ASGIApp

from app.config import Settings
from app.memory.service import Service
from app.store.database import Database

log = logging.getLogger("openbot_memory")

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


async def warm_up(settings: Settings, db: Database, app_for: Callable[[Service], ASGIApp]) -> None:
    """Plan every statement, then rehearse the common requests without writing."""
    started = time.perf_counter()
    planned = await db.plan_catalog()
    async with db.rehearsal() as rehearsal:
        service = Service.build(settings, rehearsal)
        try:
            org = f"warmup-{uuid.uuid4().hex[:12]}"
            token = await service.tokens.create(org, "warmup")
            transport = httpx.ASGITransport(app=app_for(service))
            async with httpx.AsyncClient(
                transport=transport, base_url="http://warm-up",
                headers={"Authorization": f"Bearer {token}"},
            ) as client:
                requests = await rehearse(client)
        finally:
            await service.models.close()
    log.info("warmed up in %.1f s: %d statements planned, %d requests rehearsed",
             time.perf_counter() - started, planned, requests)


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

    await call("GET", "/openapi.json")
    agent = (await call("POST", "/v1/agents", {"name": "warm-up"}))["id"]
    view = await call("POST", "/v1/sessions", {"agent": agent})
    sid = view["session"]["id"]
    items = [
        {"type": "message", "role": "user", "content": "My budget is 1500 EUR, window seats."},
        {"type": "message", "role": "assistant", "content": "Noted."},
    ]
    await call("POST", f"/v1/sessions/{sid}/turns", {"items": items})
    view = await call("GET", f"/v1/sessions/{sid}")
    view = await command(view, {"_tag": "Remember", "key": "budget", "content": "1500 EUR.",
                                "kind": "fact"})
    view = await command(view, {"_tag": "Remember", "key": "seat", "content": "Window.",
                                "kind": "preference"})
    view = await command(view, {"_tag": "Forget", "key": "budget"})
    view = await command(view, {"_tag": "Configure", "generate": False})
    await call("GET", f"/v1/sessions/{sid}/memory")
    await call("GET", f"/v1/sessions/{sid}/instructions")
    await call("GET", f"/v1/sessions/{sid}/runs")
    await call("GET", f"/v1/sessions/{sid}/versions")
    await call("GET", "/v1/sessions")
    await call("GET", "/v1/agents")
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
