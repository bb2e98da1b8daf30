"""The REST surface of SPEC section 5, as the source document's curl examples use it."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.api import bodies, openapi
from app.api.auth import principal_of
from app.api.bodies import INT64_MAX, INT64_MIN, MAX_PAGE, MAX_WAIT_SECONDS
from app.api.encoding import JsonResponse
from app.domain.turns import TurnItem
from app.errors import ValidationError
from app.memory.service import Service
from app.memory.sessions.commands import Refresh
from app.memory.views.search import DEFAULT_LIMIT


def service_of(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


def _int_param(request: Request, name: str, default: str) -> int:
    """An integer query parameter; a bad one is a ValidationError naming it."""
    try:
        value = int(request.query_params.get(name, default))
    except ValueError as exc:
        raise ValidationError(f"{name} is an integer", name) from exc
    if not INT64_MIN <= value <= INT64_MAX:  # Neo4j's integers are 64-bit
        raise ValidationError(f"{name} is an integer of 64 bits", name)
    return value


def wait_of(request: Request) -> float:
    """`?wait=S`: how long to wait for a consolidation run to finish (0 to 30 s, default 0)."""
    raw = request.query_params.get("wait", "0")
    try:
        seconds = float(raw)
    except ValueError as exc:
        raise ValidationError("wait is a number of seconds", "wait") from exc
    if not 0 <= seconds <= MAX_WAIT_SECONDS:  # also refuses nan
        raise ValidationError(f"wait is between 0 and {MAX_WAIT_SECONDS:.0f} seconds", "wait")
    return seconds


def page_of(request: Request) -> tuple[int, int]:
    """`?offset=&limit=` paging with a sane default and a ceiling."""
    offset = _int_param(request, "offset", "0")
    limit = _int_param(request, "limit", "50")
    if offset < 0:
        raise ValidationError("offset is not negative", "offset")
    if not 1 <= limit <= MAX_PAGE:
        raise ValidationError(f"limit is between 1 and {MAX_PAGE}", "limit")
    return offset, limit


def json(body: Any, status: int = 200) -> JsonResponse:
    return JsonResponse(body, status_code=status)


async def healthz(request: Request) -> Response:
    return json({"status": "ok"})


async def readyz(request: Request) -> Response:
    if await service_of(request).db.ping():
        return json({"status": "ready"})
    return json({"_tag": "Unavailable", "message": "Neo4j does not answer"}, 503)


async def openapi_document(request: Request) -> Response:
    """OpenAPI 3.1 of every route below, built once per process."""
    if not hasattr(request.app.state, "openapi"):
        request.app.state.openapi = openapi.document(routes)
    return json(request.app.state.openapi)


async def create_agent(request: Request) -> Response:
    who = principal_of(request)
    body = await bodies.parse(request, bodies.CreateAgent)
    agent = await service_of(request).agents.create(who, body.name, body.shared, body.model)
    return json(agent.to_json(), 201)


async def list_agents(request: Request) -> Response:
    who = principal_of(request)
    offset, limit = page_of(request)
    agents = await service_of(request).agents.page(who, offset, limit)
    return json({"agents": [agent.to_json() for agent in agents]})


async def get_agent(request: Request) -> Response:
    who = principal_of(request)
    agent = await service_of(request).agents.get(who, request.path_params["id"])
    return json(agent.to_json())


async def create_session(request: Request) -> Response:
    who = principal_of(request)
    body = await bodies.parse(request, bodies.CreateSession)
    view = await service_of(request).sessions.create_session(
        who, body.agent, body.kind, body.parent, body.person, body.model
    )
    return json(view.to_json(), 201)


async def list_sessions(request: Request) -> Response:
    who = principal_of(request)
    offset, limit = page_of(request)
    agent = request.query_params.get("agent")
    views = await service_of(request).sessions.list_sessions(who, agent, offset, limit)
    return json({"sessions": [view.to_json() for view in views]})


async def get_session(request: Request) -> Response:
    who = principal_of(request)
    view = await service_of(request).sessions.view(who, request.path_params["id"], items=False)
    return json(view.to_json())


async def get_memory(request: Request) -> Response:
    who = principal_of(request)
    view = await service_of(request).sessions.view(who, request.path_params["id"], items=False)
    return json(view.memory.to_json())


async def post_memory(request: Request) -> Response:
    who = principal_of(request)
    body = await bodies.parse(request, bodies.MemoryCommand)
    command = body.command.to_command()
    service = service_of(request)
    session_id = request.path_params["id"]
    if isinstance(command, Refresh):
        view = await service.consolidation.refresh(who, session_id)
    else:
        view = await service.sessions.command(
            who, session_id, body.expected, body.revision, command, items=False
        )
    return json(view.to_json())


def _items(body: list[bodies.TurnItemBody]) -> list[TurnItem]:
    return [TurnItem(item.type, item.role, item.content, item.id, item.app) for item in body]


async def record_turn(request: Request) -> Response:
    """Record a turn; with `?wait=S`, answer once its consolidation run ended (or S passed)."""
    who = principal_of(request)
    wait = wait_of(request)
    body = await bodies.parse(request, bodies.RecordTurn)
    service, session_id = service_of(request), request.path_params["id"]
    answer, created, run_id = await service.turns.record(
        who, session_id, _items(body.items), body.model, body.status
    )
    body_of = answer.to_json()
    if wait and run_id is not None:
        await service.consolidation.wait_for(run_id, wait)
        run = await service.consolidation.run(who, session_id, run_id)
        body_of["run"] = {"id": run["id"], "status": run["status"]}
    return json(body_of, 201 if created else 200)


async def complete_turn(request: Request) -> Response:
    """A turn that waited for an approval completes, with the items of its second step."""
    who = principal_of(request)
    body = await bodies.parse(request, bodies.CompleteTurn)
    answer, _, _ = await service_of(request).turns.record(
        who, request.path_params["id"], _items(body.items), None, "completed",
        turn_id=request.path_params["turn"],
    )
    return json(answer.to_json())


async def get_turn(request: Request) -> Response:
    who = principal_of(request)
    answer = await service_of(request).turns.turn(
        who, request.path_params["id"], request.path_params["turn"]
    )
    return json(answer.to_json())


async def get_instructions(request: Request) -> Response:
    who = principal_of(request)
    shown = await service_of(request).turns.instructions(who, request.path_params["id"])
    return json(
        {
            "memory": shown.text,
            "included": {"session": list(shown.keys), "agent": list(shown.agent_keys)},
        }
    )


async def get_runs(request: Request) -> Response:
    who = principal_of(request)
    session_id = request.path_params["id"]
    service = service_of(request)
    await service.sessions.view(who, session_id, items=False)  # 404: unknown or foreign
    return json({"runs": await service.consolidation.runs(who, session_id)})


async def get_run(request: Request) -> Response:
    """One consolidation run; with `?wait=S`, answer once it ended (or S passed)."""
    who = principal_of(request)
    wait = wait_of(request)
    service = service_of(request)
    session_id, run_id = request.path_params["id"], request.path_params["run"]
    await service.consolidation.run(who, session_id, run_id)  # 404 for another's run
    if wait:
        await service.consolidation.wait_for(run_id, wait)
    return json(await service.consolidation.run(who, session_id, run_id))


async def fork_session(request: Request) -> Response:
    who = principal_of(request)
    body = await bodies.parse(request, bodies.Fork, empty_ok=True)
    view = await service_of(request).history.fork(who, request.path_params["id"], body.at)
    return json(view.to_json(), 201)


async def revert_session(request: Request) -> Response:
    who = principal_of(request)
    body = await bodies.parse(request, bodies.Revert)
    view = await service_of(request).history.revert(
        who, request.path_params["id"], body.expected, body.revision, body.to
    )
    return json(view.to_json())


async def list_versions(request: Request) -> Response:
    who = principal_of(request)
    session_id = request.path_params["id"]
    service = service_of(request)
    await service.sessions.view(who, session_id, items=False)  # 404: unknown or foreign
    versions = await service.history.versions(who, [session_id])
    return json({"versions": [v.to_json() for v in versions.get(session_id, [])]})


async def get_version(request: Request) -> Response:
    """A version as it was: its memory entries, processed items, and a page of its timeline."""
    who = principal_of(request)
    offset, limit = page_of(request)
    version, entries, processed, items = await service_of(request).history.at_version(
        who, request.path_params["id"], request.path_params["version"], offset, limit
    )
    return json(
        {
            "version": {"id": version.id, "cause": version.cause, "at": version.at},
            "memory": {
                "entries": {entry.key: entry.to_json() for entry in entries},
                "processed": processed,
            },
            "items": [item.to_json() for item in items],
        }
    )


async def get_org_settings(request: Request) -> Response:
    who = principal_of(request)
    settings = await service_of(request).orgs.settings(who)
    return json(settings.to_json())


async def patch_org_settings(request: Request) -> Response:
    who = principal_of(request)
    body = await bodies.parse(request, bodies.OrgSettingsPatch)
    settings = await service_of(request).orgs.update(who, body.changes())
    return json(settings.to_json())


async def get_agent_memory(request: Request) -> Response:
    who = principal_of(request)
    memory = await service_of(request).agent_memory.view(who, request.path_params["id"])
    return json(memory.to_json())


async def post_agent_memory(request: Request) -> Response:
    who = principal_of(request)
    body = await bodies.parse(request, bodies.AgentMemoryCommand)
    memory = await service_of(request).agent_memory.command(
        who, request.path_params["id"], body.expected, body.command.to_command()
    )
    return json(memory.to_json())


async def get_agent_log(request: Request) -> Response:
    who = principal_of(request)
    after = _int_param(request, "after", "0")
    limit = _int_param(request, "limit", "50")
    log = await service_of(request).agent_memory.log(who, request.path_params["id"], after, limit)
    return json({"changes": [entry.to_json() for entry in log]})


async def get_learning_jobs(request: Request) -> Response:
    who = principal_of(request)
    service = service_of(request)
    agent = await service.agents.get(who, request.path_params["id"])  # 404 for a foreign one
    return json({"jobs": await service.learning.jobs(who, agent.id)})


async def promote_session(request: Request) -> Response:
    who = principal_of(request)
    body = await bodies.parse(request, bodies.Promote, empty_ok=True)
    agent, memory = await service_of(request).promotion.promote(
        who, request.path_params["id"], body.name
    )
    return json({"agent": agent.to_json(), "memory": memory.to_json()}, 201)


async def search(request: Request) -> Response:
    """Full-text search over what the caller may read; a bad query is a 400 on `q`."""
    who = principal_of(request)
    limit = _int_param(request, "limit", str(DEFAULT_LIMIT))
    params = request.query_params
    try:
        found = await service_of(request).search.search(
            who, params.get("q", ""), session=params.get("session"), agent=params.get("agent"),
            limit=limit,
        )
    except ValidationError as exc:
        if exc.field != "query":
            raise
        raise ValidationError(exc.message, "q") from exc
    return json(found.to_json())


routes = [
    Route("/healthz", healthz, methods=["GET"]),
    Route("/readyz", readyz, methods=["GET"]),
    Route("/openapi.json", openapi_document, methods=["GET"]),
    Route("/v1/agents", create_agent, methods=["POST"]),
    Route("/v1/agents", list_agents, methods=["GET"]),
    Route("/v1/agents/{id}", get_agent, methods=["GET"]),
    Route("/v1/agents/{id}/memory", get_agent_memory, methods=["GET"]),
    Route("/v1/agents/{id}/memory", post_agent_memory, methods=["POST"]),
    Route("/v1/agents/{id}/memory/log", get_agent_log, methods=["GET"]),
    Route("/v1/agents/{id}/learning", get_learning_jobs, methods=["GET"]),
    Route("/v1/sessions", create_session, methods=["POST"]),
    Route("/v1/sessions", list_sessions, methods=["GET"]),
    Route("/v1/sessions/{id}", get_session, methods=["GET"]),
    Route("/v1/sessions/{id}/memory", get_memory, methods=["GET"]),
    Route("/v1/sessions/{id}/memory", post_memory, methods=["POST"]),
    Route("/v1/sessions/{id}/turns", record_turn, methods=["POST"]),
    Route("/v1/sessions/{id}/turns/{turn}", get_turn, methods=["GET"]),
    Route("/v1/sessions/{id}/turns/{turn}/complete", complete_turn, methods=["POST"]),
    Route("/v1/sessions/{id}/instructions", get_instructions, methods=["GET"]),
    Route("/v1/sessions/{id}/runs", get_runs, methods=["GET"]),
    Route("/v1/sessions/{id}/runs/{run}", get_run, methods=["GET"]),
    Route("/v1/sessions/{id}/fork", fork_session, methods=["POST"]),
    Route("/v1/sessions/{id}/revert", revert_session, methods=["POST"]),
    Route("/v1/sessions/{id}/promote", promote_session, methods=["POST"]),
    Route("/v1/sessions/{id}/versions", list_versions, methods=["GET"]),
    Route("/v1/sessions/{id}/versions/{version}", get_version, methods=["GET"]),
    Route("/v1/org/settings", get_org_settings, methods=["GET"]),
    Route("/v1/org/settings", patch_org_settings, methods=["PATCH"]),
    Route("/v1/search", search, methods=["GET"]),
]
