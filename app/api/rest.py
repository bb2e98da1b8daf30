"""The REST surface of SPEC section 5, as the source document's curl examples use it."""

from __future__ import annotations

import re
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from app.api import bodies, openapi, responses
from app.api.auth import principal_of
from app.api.bodies import INT64_MAX, INT64_MIN, MAX_WAIT_SECONDS
from app.api.encoding import JsonResponse
from app.api.openapi import NOT_YOURS, PAGE, WAIT, Operations, integer
from app.api.responses import agents as agent_answers
from app.api.responses import erasures as erasure_answers
from app.api.responses import jobs as job_answers
from app.api.responses import search as search_answers
from app.api.responses import sessions as session_answers
from app.api.responses import turns as turn_answers
from app.domain.enums import TurnStatus
from app.errors import ValidationError
from app.memory.agents.memory import MAX_LOG_PAGE
from app.memory.paging import DEFAULT_PAGE, MAX_OFFSET, MAX_PAGE, check_offset
from app.memory.service import Service
from app.memory.views.search import DEFAULT_LIMIT, MAX_LIMIT, MAX_QUERY, STATUSES


def service_of(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


# A query parameter's number is written in ASCII digits, with a minus sign for a negative one
# (and, for a number that need not be whole, a fraction and an exponent): Python's int() and
# float() would also read "1_0", " 5", "+5" or other scripts' digits.
_INTEGER = re.compile(r"-?[0-9]+")
_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?")


def _int_param(request: Request, name: str, default: str) -> int:
    """An integer query parameter; a bad one is a ValidationError naming it."""
    raw = request.query_params.get(name, default)
    if not _INTEGER.fullmatch(raw):
        raise ValidationError(f"{name} is an integer", name)
    # Neo4j's integers are 64-bit (19 digits); int() refuses more than 4,300 digits
    digits = raw.lstrip("-").lstrip("0") or "0"
    value = None if len(digits) > 19 else int(digits) * (-1 if raw.startswith("-") else 1)
    if value is None or not INT64_MIN <= value <= INT64_MAX:
        raise ValidationError(f"{name} is an integer of 64 bits", name)
    return value


def wait_of(request: Request) -> float:
    """`?wait=S`: how long to wait for a consolidation run to finish (0 to 30 s, default 0)."""
    raw = request.query_params.get("wait", "0")
    if not _NUMBER.fullmatch(raw):
        raise ValidationError("wait is a number of seconds", "wait")
    seconds = float(raw)
    if not 0 <= seconds <= MAX_WAIT_SECONDS:
        raise ValidationError(f"wait is between 0 and {MAX_WAIT_SECONDS:.0f} seconds", "wait")
    return seconds


def page_of(request: Request) -> tuple[int, int]:
    """`?offset=&limit=` paging with a sane default and a ceiling."""
    offset = _int_param(request, "offset", "0")
    limit = _int_param(request, "limit", str(DEFAULT_PAGE))
    check_offset(offset, "offset")
    if not 1 <= limit <= MAX_PAGE:
        raise ValidationError(f"limit is between 1 and {MAX_PAGE}", "limit")
    return offset, limit


def json(body: Any, status: int = 200) -> JsonResponse:
    return JsonResponse(body, status_code=status)


operations = Operations()


@operations.get("/healthz", "The process answers.", responses.Health)
async def healthz(request: Request) -> Response:
    return json({"status": "ok"})


@operations.get("/readyz", "The service is warm and Neo4j answers (503 `Unavailable` until then).",
                responses.Health,
                also=((503, "warming up at start, or Neo4j does not answer", "Unavailable"),))
async def readyz(request: Request) -> Response:
    ready = getattr(request.app.state, "ready", None)
    if ready is not None and not ready.is_set():
        return json({"_tag": "Unavailable", "message": "the service is warming up"}, 503)
    if await service_of(request).db.ping():
        return json({"status": "ready"})
    return json({"_tag": "Unavailable", "message": "Neo4j does not answer"}, 503)


@operations.get("/openapi.json", "This document.", dict[str, Any])
async def openapi_document(request: Request) -> Response:
    """OpenAPI 3.1 of every route below, built once per process."""
    if not hasattr(request.app.state, "openapi"):
        request.app.state.openapi = openapi.document(routes)
    return json(request.app.state.openapi)


@operations.post("/v1/agents", "Create an agent of your org.", agent_answers.Agent,
                 body=bodies.CreateAgent, status=201, gives=(("id", "/id"),),
                 feeds=(("POST /v1/sessions", "agent", "/id"),))
async def create_agent(request: Request) -> Response:
    who = principal_of(request)
    body = await bodies.parse(request, bodies.CreateAgent)
    agent = await service_of(request).agents.create(who, body.name, body.shared, body.model)
    return json(agent_answers.agent_json(agent), 201)


@operations.get("/v1/agents", "The agents of your org, oldest first.", agent_answers.Agents,
                query=PAGE)
async def list_agents(request: Request) -> Response:
    who = principal_of(request)
    offset, limit = page_of(request)
    agents = await service_of(request).agents.page(who, offset, limit)
    return json({"agents": [agent_answers.agent_json(agent) for agent in agents]})


@operations.get("/v1/agents/{id}", "One agent.", agent_answers.Agent)
async def get_agent(request: Request) -> Response:
    who = principal_of(request)
    agent = await service_of(request).agents.get(who, request.path_params["id"])
    return json(agent_answers.agent_json(agent))


@operations.get("/v1/agents/{id}/memory",
                "The agent's memory as you may see it, and its version (A10).",
                agent_answers.AgentMemory)
async def get_agent_memory(request: Request) -> Response:
    who = principal_of(request)
    memory = await service_of(request).agent_memory.view(who, request.path_params["id"])
    return json(agent_answers.agent_memory_json(memory))


@operations.post("/v1/agents/{id}/memory",
                 "Remember or Forget in the agent's memory at the version you last saw (A10).",
                 agent_answers.AgentMemory, body=bodies.AgentMemoryCommand,
                 conflict="AgentConflict")
async def post_agent_memory(request: Request) -> Response:
    who = principal_of(request)
    body = await bodies.parse(request, bodies.AgentMemoryCommand)
    with bodies.nested_command(type(body.command)):
        memory = await service_of(request).agent_memory.command(
            who, request.path_params["id"], body.expected, body.command.to_command()
        )
    return json(agent_answers.agent_memory_json(memory))


@operations.get("/v1/agents/{id}/memory/log",
                "Each version of the agent's memory you may see, oldest first (A11).",
                agent_answers.AgentLog,
                query=(("after", integer(0, MAX_OFFSET), "versions after this one (default 0)"),
                       ("limit", integer(1, MAX_LOG_PAGE),
                        f"versions to answer, 1 to {MAX_LOG_PAGE} "
                        f"(default {DEFAULT_PAGE})")))
async def get_agent_log(request: Request) -> Response:
    who = principal_of(request)
    after = _int_param(request, "after", "0")
    limit = _int_param(request, "limit", str(DEFAULT_PAGE))
    log = await service_of(request).agent_memory.log(who, request.path_params["id"], after, limit)
    return json({"changes": [agent_answers.log_entry_json(entry) for entry in log]})


@operations.get("/v1/agents/{id}/learning",
                "The agent's learning jobs, newest first: status, model, error, read, kept, "
                "dropped.", job_answers.LearningJobs)
async def get_learning_jobs(request: Request) -> Response:
    who = principal_of(request)
    service = service_of(request)
    agent = await service.agents.get(who, request.path_params["id"])  # 404 for a foreign one
    jobs = await service.learning.jobs(who, agent.id)
    return json({"jobs": [job_answers.learning_job_json(job) for job in jobs]})


@operations.post("/v1/sessions", "Start a session; answers its Session view.",
                 session_answers.SessionView, body=bodies.CreateSession, status=201,
                 also=(NOT_YOURS, (403, "a person names another person", "Forbidden")),
                 gives=(("id", "/session/id"), ("version", "/session/head")))
async def create_session(request: Request) -> Response:
    who = principal_of(request)
    body = await bodies.parse(request, bodies.CreateSession)
    view = await service_of(request).sessions.create_session(
        who, body.agent, body.kind, body.parent, body.person, body.model
    )
    return json(session_answers.session_view_json(view), 201)


@operations.get("/v1/sessions", "The sessions you may reach, oldest first.",
                session_answers.Sessions,
                query=(*PAGE, ("agent", {"type": "string"}, "only this agent's sessions")))
async def list_sessions(request: Request) -> Response:
    who = principal_of(request)
    offset, limit = page_of(request)
    agent = request.query_params.get("agent")
    views = await service_of(request).sessions.list_sessions(who, agent, offset, limit)
    return json({"sessions": [session_answers.session_view_json(view) for view in views]})


@operations.get("/v1/sessions/{id}", "The Session view: the session and its memory (S2).",
                session_answers.SessionView)
async def get_session(request: Request) -> Response:
    who = principal_of(request)
    view = await service_of(request).sessions.view(who, request.path_params["id"], items=False)
    return json(session_answers.session_view_json(view))


@operations.get("/v1/sessions/{id}/memory", "The session's memory view (S2).",
                session_answers.Memory)
async def get_memory(request: Request) -> Response:
    who = principal_of(request)
    view = await service_of(request).sessions.view(who, request.path_params["id"], items=False)
    return json(session_answers.memory_json(view.memory))


@operations.post("/v1/sessions/{id}/memory",
                 "Remember, Forget, Configure or Refresh at the head and revision you last saw "
                 "(S12-S16).", session_answers.SessionView, body=bodies.MemoryCommand,
                 conflict="SessionConflict")
async def post_memory(request: Request) -> Response:
    who = principal_of(request)
    body = await bodies.parse(request, bodies.MemoryCommand)
    with bodies.nested_command(type(body.command)):
        view = await service_of(request).sessions.command(
            who, request.path_params["id"], body.expected, body.revision,
            body.command.to_command(), items=False,
        )
    return json(session_answers.session_view_json(view))


@operations.post("/v1/sessions/{id}/turns",
                 "Record a turn; answers at once, or with `wait` once its consolidation run has "
                 "ended (201; 200 for a retry with the same item ids).", turn_answers.TurnView,
                 body=bodies.RecordTurn, status=201, query=WAIT, conflict="SessionConflict",
                 also_ok=((200, "a retry with the same item ids: the turn recorded then"),),
                 gives=(("id", "$request.path.id"), ("turn", "/turn/id"), ("run", "/run/id")),
                 reaches=("/v1/sessions/{id}/runs/{run}",))
async def record_turn(request: Request) -> Response:
    """Record a turn; with `?wait=S`, answer once its consolidation run ended (or S passed)."""
    service, session_id, wait = service_of(request), request.path_params["id"], wait_of(request)
    who = principal_of(request)
    body = await bodies.parse(request, bodies.RecordTurn)
    items = bodies.turn_items(body.items)
    answer, created, run_id = await service.turns.record(
        who, session_id, items, body.model, body.status
    )
    view = turn_answers.turn_view_json(answer)
    if wait and run_id is not None:
        await service.consolidation.wait_for(run_id, wait)
        run = await service.consolidation.run(who, session_id, run_id)
        view["run"] = {"id": run.id, "status": run.status}
    return json(view, 201 if created else 200)


@operations.post("/v1/sessions/{id}/turns/{turn}/complete",
                 "Complete a turn that awaited an approval.", turn_answers.TurnView,
                 body=bodies.CompleteTurn, conflict="SessionConflict")
async def complete_turn(request: Request) -> Response:
    """A turn that waited for an approval completes, with the items of its second step."""
    who = principal_of(request)
    body = await bodies.parse(request, bodies.CompleteTurn)
    items = bodies.turn_items(body.items)
    answer, _, _ = await service_of(request).turns.record(
        who, request.path_params["id"], items, None, TurnStatus.COMPLETED,
        turn_id=request.path_params["turn"],
    )
    return json(turn_answers.turn_view_json(answer))


@operations.get("/v1/sessions/{id}/turns/{turn}", "One turn of the session.", turn_answers.TurnView)
async def get_turn(request: Request) -> Response:
    who = principal_of(request)
    answer = await service_of(request).turns.turn(
        who, request.path_params["id"], request.path_params["turn"]
    )
    return json(turn_answers.turn_view_json(answer))


@operations.get("/v1/sessions/{id}/instructions",
                "The memory text a turn would get now, and the keys included (S5, S6, A8).",
                turn_answers.Instructions)
async def get_instructions(request: Request) -> Response:
    who = principal_of(request)
    shown = await service_of(request).turns.instructions(who, request.path_params["id"])
    return json(turn_answers.instructions_json(shown))


@operations.get("/v1/sessions/{id}/runs", "The session's consolidation runs, newest first.",
                job_answers.Runs)
async def get_runs(request: Request) -> Response:
    who = principal_of(request)
    session_id = request.path_params["id"]
    service = service_of(request)
    await service.sessions.view(who, session_id, items=False)  # 404: unknown or foreign
    runs = await service.consolidation.runs(who, session_id)
    return json({"runs": [job_answers.run_json(run) for run in runs]})


@operations.get("/v1/sessions/{id}/runs/{run}",
                "One consolidation run; with `wait`, once it has ended.", job_answers.Run,
                query=WAIT)
async def get_run(request: Request) -> Response:
    """One consolidation run; with `?wait=S`, answer once it ended (or S passed)."""
    who = principal_of(request)
    wait = wait_of(request)
    service = service_of(request)
    session_id, run_id = request.path_params["id"], request.path_params["run"]
    await service.consolidation.run(who, session_id, run_id)  # 404 for another's run
    if wait:
        await service.consolidation.wait_for(run_id, wait)
    return json(job_answers.run_json(await service.consolidation.run(who, session_id, run_id)))


@operations.post("/v1/sessions/{id}/fork",
                 "A new session with this one's history and memory at a version.",
                 session_answers.SessionView, body=bodies.Fork, status=201, body_optional=True)
async def fork_session(request: Request) -> Response:
    who = principal_of(request)
    body = await bodies.parse(request, bodies.Fork, empty_ok=True)
    view = await service_of(request).history.fork(who, request.path_params["id"], body.at)
    return json(session_answers.session_view_json(view), 201)


@operations.post("/v1/sessions/{id}/revert",
                 "History and memory as they were at a version, as a new head.",
                 session_answers.SessionView, body=bodies.Revert, conflict="SessionConflict")
async def revert_session(request: Request) -> Response:
    who = principal_of(request)
    body = await bodies.parse(request, bodies.Revert)
    view = await service_of(request).history.revert(
        who, request.path_params["id"], body.expected, body.revision, body.to
    )
    return json(session_answers.session_view_json(view))


@operations.post("/v1/sessions/{id}/promote",
                 "A subagent session's lasting entries become a new agent's memory (A12).",
                 agent_answers.Promoted, body=bodies.Promote, status=201,
                 conflict="SessionConflict", body_optional=True)
async def promote_session(request: Request) -> Response:
    who = principal_of(request)
    body = await bodies.parse(request, bodies.Promote, empty_ok=True)
    agent, memory = await service_of(request).promotion.promote(
        who, request.path_params["id"], body.name
    )
    return json(
        {"agent": agent_answers.agent_json(agent),
         "memory": agent_answers.agent_memory_json(memory)},
        201,
    )


@operations.get("/v1/sessions/{id}/versions", "Every head the session ever had, oldest first.",
                session_answers.Versions)
async def list_versions(request: Request) -> Response:
    who = principal_of(request)
    session_id = request.path_params["id"]
    service = service_of(request)
    await service.sessions.view(who, session_id, items=False)  # 404: unknown or foreign
    versions = await service.history.versions(who, [session_id])
    of_session = versions.get(session_id, [])
    return json({"versions": [session_answers.version_json(v) for v in of_session]})


@operations.get("/v1/sessions/{id}/versions/{version}",
                "A version as it was: its memory and a page of its timeline.",
                session_answers.VersionView, query=PAGE)
async def get_version(request: Request) -> Response:
    """A version as it was: its memory entries, processed items, and a page of its timeline."""
    who = principal_of(request)
    offset, limit = page_of(request)
    version, entries, processed, items = await service_of(request).history.at_version(
        who, request.path_params["id"], request.path_params["version"], offset, limit
    )
    return json(session_answers.version_view_json(version, entries, processed, items))


@operations.get("/v1/org/settings", "Your org's defaults.", session_answers.OrgSettings)
async def get_org_settings(request: Request) -> Response:
    who = principal_of(request)
    settings = await service_of(request).orgs.settings(who)
    return json(session_answers.org_settings_json(settings))


@operations.patch("/v1/org/settings", "Change your org's defaults.", session_answers.OrgSettings,
                  body=bodies.OrgSettingsPatch)
async def patch_org_settings(request: Request) -> Response:
    who = principal_of(request)
    body = await bodies.parse(request, bodies.OrgSettingsPatch)
    settings = await service_of(request).orgs.update(who, body.changes())
    return json(session_answers.org_settings_json(settings))


@operations.get(
    "/v1/search", "Full-text search of the session and agent entries you may read, best first.",
    search_answers.Hits,
    query=(("q", {"type": "string", "minLength": 1, "maxLength": MAX_QUERY, "pattern": r"\S"},
            "the words to find (Lucene syntax)"),
           ("session", {"type": "string"}, "only this session's entries"),
           ("agent", {"type": "string"}, "only this agent's entries"),
           ("status", {"type": "string", "enum": list(STATUSES)},
            "only entries of this status (active: remembered now; retracted: forgotten)"),
           ("offset", integer(0, MAX_OFFSET), "hits to pass over (default 0)"),
           ("limit", integer(1, MAX_LIMIT), "hits to answer (default 20)")),
    required=("q",), also=((404, "the session or agent is not one you may reach", "NotFound"),),
)
async def search(request: Request) -> Response:
    """Full-text search over what the caller may read; a bad query is a 400 on `q`. `more`
    says whether hits follow the page (`?offset=` the next one)."""
    who = principal_of(request)
    offset = _int_param(request, "offset", "0")
    limit = _int_param(request, "limit", str(DEFAULT_LIMIT))
    params = request.query_params
    try:
        found = await service_of(request).search.search(
            who, params.get("q", ""), session=params.get("session"), agent=params.get("agent"),
            status=params.get("status"), offset=offset, limit=limit,
        )
    except ValidationError as exc:
        if exc.field != "query":
            raise
        raise ValidationError(exc.message, "q") from exc
    return json(search_answers.search_json(found))


@operations.post("/v1/org/persons/{person}/erase",
                 "Erase a person's data everywhere it went (service tokens only); resumes an "
                 "erasure that stopped.", erasure_answers.ErasureView,
                 also=((403, "a person's token", "Forbidden"),))
async def erase_person(request: Request) -> Response:
    who = principal_of(request)
    erasure = await service_of(request).erasures.erase_person(who, request.path_params["person"])
    return json({"erasure": erasure_answers.erasure_json(erasure)})


@operations.get("/v1/org/erasures", "The org's erasures, newest first (service tokens only).",
                erasure_answers.Erasures, also=((403, "a person's token", "Forbidden"),))
async def list_erasures(request: Request) -> Response:
    who = principal_of(request)
    erasures = await service_of(request).erasures.of_org(who)
    return json({"erasures": [erasure_answers.erasure_json(e) for e in erasures]})


@operations.delete("/v1/sessions/{id}",
                   "Delete a session: its items and the memory derived from them are erased; "
                   "its forks keep their own memory.", erasure_answers.Deleted)
async def delete_session(request: Request) -> Response:
    who = principal_of(request)
    session_id = request.path_params["id"]
    await service_of(request).erasures.delete_session(who, session_id)
    return json({"deleted": session_id})


routes = operations.routes
