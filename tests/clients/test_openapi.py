"""The client cannot drift from the server's `/openapi.json`: every call the client makes is an
operation of the document, every query parameter one of its parameters, every field it sends
a property of its request body, and every field of each answer model a property of its 2xx
response schema."""

from __future__ import annotations

import re
import types
import typing
from typing import Any

import httpx
from openbot_memory_client import models as m
from openbot_memory_client.core import KEEP, Call, Core
from pydantic import BaseModel

from tests.conftest import RunningServer

Schema = dict[str, Any]

S, A, T, R, V = "ses-1", "agt-1", "t-1", "r-1", "v-1"
ITEMS: list[m.TurnItem | dict[str, Any]] = [
    m.TurnItem(id="i-1", type="app_action", role="assistant", content="x", app="maps")]


def every_call(core: Core) -> list[tuple[Call[Any], type[BaseModel] | None]]:
    """Each call the client makes, with every optional field sent, and the model its answer
    is read as (None for GraphQL, whose schema is schema.graphql)."""
    return [
        (core.create_agent("a", True, "builtin"), m.Agent),
        (core.get_agent(A), m.Agent),
        (core.agents_page(0, 10), m.Agents),
        (core.create_session(A, "subagent", S, "ana", "builtin"), m.SessionView),
        (core.get_session(S), m.SessionView),
        (core.get_memory(S), m.Memory),
        (core.sessions_page(A, 0, 10), m.Sessions),
        (core.record_turn(S, ITEMS, "builtin", "awaiting_approval", 5), m.TurnView),
        (core.complete_turn(S, T, ITEMS), m.TurnView),
        (core.get_turn(S, T), m.TurnView),
        (core.instructions(S), m.Instructions),
        (core.runs(S), m.Runs),
        (core.get_run(S, R, 5), m.Run),
        (core.command(S, m.Remember(key="k", content="c", kind="fact"), V, 1), m.SessionView),
        (core.command(S, m.Forget(key="k"), V, 1), m.SessionView),
        (core.command(S, core.configure_command(True, None), V, 1), m.SessionView),
        (core.command(S, m.Refresh(), V, 1), m.SessionView),
        (core.versions(S), m.Versions),
        (core.version(S, V, 0, 10), m.VersionView),
        (core.fork(S, V), m.SessionView),
        (core.revert(S, V, V, 1), m.SessionView),
        (core.promote(S, "helper"), m.Promoted),
        (core.org_settings(), m.OrgSettings),
        (core.update_org_settings(True, False, True, "builtin", "builtin"), m.OrgSettings),
        (core.update_org_settings(KEEP, KEEP, KEEP, KEEP, None), m.OrgSettings),
        (core.agent_memory(A), m.AgentMemory),
        (core.agent_command(A, m.AgentRemember(
            key="k", content="c", kind="decision", about="ana", visibility="private"), 1),
         m.AgentMemory),
        (core.agent_command(A, m.AgentForget(key="k", about="ana"), 1), m.AgentMemory),
        (core.agent_log_page(A, 0, 10), m.AgentLog),
        (core.learning_jobs(A), m.LearningJobs),
        (core.search("q", S, A, 5), m.SearchResults),
        (core.search("q", S, A, 5, 10), m.SearchResults),
        (core.delete_session(S), m.Deleted),
        (core.erase_person("ana"), m.ErasureView),
        (core.erasures(), m.Erasures),
    ]


def resolve(doc: Schema, schema: Schema) -> Schema:
    while "$ref" in schema:
        name = schema["$ref"].removeprefix("#/components/schemas/")
        schema = doc["components"]["schemas"][name]
    return schema


def alternatives(doc: Schema, schema: Schema) -> list[Schema]:
    """The object schemas a schema may be: itself, or each of its anyOf/oneOf/allOf."""
    schema = resolve(doc, schema)
    parts = [*schema.get("anyOf", []), *schema.get("oneOf", []), *schema.get("allOf", [])]
    if not parts:
        return [schema]
    return [one for part in parts for one in alternatives(doc, part)]


def properties(doc: Schema, schema: Schema) -> dict[str, Schema]:
    found: dict[str, Schema] = {}
    for one in alternatives(doc, schema):
        found.update(one.get("properties", {}))
    return found


def inner(doc: Schema, schema: Schema) -> list[Schema]:
    """What a list's items or a map's values are, for each alternative."""
    out: list[Schema] = []
    for one in alternatives(doc, schema):
        for key in ("items", "additionalProperties"):
            if isinstance(one.get(key), dict):
                out.append(one[key])
    return out


def models_in(annotation: Any) -> list[tuple[type[BaseModel], int]]:
    """The answer models an annotation holds, each with how deep in lists or maps (0, 1)."""
    origin = typing.get_origin(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [(annotation, 0)]
    if origin in (list, dict):
        value = typing.get_args(annotation)[-1]
        return [(model, depth + 1) for model, depth in models_in(value)]
    if origin in (typing.Union, types.UnionType):
        return [found for arg in typing.get_args(annotation) for found in models_in(arg)]
    return []


def missing(doc: Schema, model: type[BaseModel], schema: Schema, where: str) -> list[str]:
    """Fields of `model` (by their wire names) that `schema` has no property for."""
    props = properties(doc, schema)
    out: list[str] = []
    for name, field in model.model_fields.items():
        wire = field.alias or name
        if wire not in props:
            out.append(f"{where}.{wire}")
            continue
        for nested, depth in models_in(field.annotation):
            schemas = [props[wire]]
            for _ in range(depth):
                schemas = [one for s in schemas for one in inner(doc, s)]
            for one in schemas:
                out += missing(doc, nested, one, f"{where}.{wire}")
    return out


def operation(doc: Schema, call: Call[Any]) -> Schema:
    for template, methods in doc["paths"].items():
        pattern = "^" + re.sub(r"\{[^}]+\}", "[^/]+", template) + "$"
        if re.match(pattern, call.path) and call.method.lower() in methods:
            found: Schema = methods[call.method.lower()]
            return found
    raise AssertionError(f"{call.method} {call.path} is not in /openapi.json")


def sent(doc: Schema, body: Any, schema: Schema, where: str) -> list[str]:
    """Keys of the body the client sends that the request schema has no property for."""
    if isinstance(body, list):
        return [bad for value in body for item in inner(doc, schema)
                for bad in sent(doc, value, item, where + "[]")]
    if not isinstance(body, dict):
        return []
    props = properties(doc, schema)
    out: list[str] = []
    for key, value in body.items():
        if key not in props:
            out.append(f"{where}.{key}")
        else:
            out += sent(doc, value, props[key], f"{where}.{key}")
    return out


def answer_schema(doc: Schema, op: Schema) -> Schema | None:
    for status, response in op.get("responses", {}).items():
        if status.startswith("2"):
            schema = response.get("content", {}).get("application/json", {}).get("schema")
            if schema and properties(doc, schema):
                return dict(schema)
    return None


def test_the_client_speaks_the_servers_openapi(server: RunningServer) -> None:
    doc = httpx.get(f"{server.url}/openapi.json").json()
    checked_answers = 0
    problems: list[str] = []
    for call, answer in every_call(Core()):
        op = operation(doc, call)
        name = f"{call.method} {call.path}"
        if call.body:
            schema = op["requestBody"]["content"]["application/json"]["schema"]
            problems += sent(doc, call.body, schema, name)
        for param in call.params or {}:
            if param not in {p["name"] for p in op.get("parameters", [])}:
                problems.append(f"{name}?{param}")
        schema = answer_schema(doc, op)
        if schema is not None and answer is not None:
            problems += missing(doc, answer, schema, name)
            checked_answers += 1
    assert problems == []
    assert checked_answers == len(every_call(Core()))  # every answer has its schema


# Operations that are the service's own, not a client's: probes and the document itself.
NOT_A_CLIENTS = {("get", "/healthz"), ("get", "/readyz"), ("get", "/openapi.json")}


def test_the_client_has_a_call_for_every_operation_of_the_servers_openapi(
    server: RunningServer,
) -> None:
    doc = httpx.get(f"{server.url}/openapi.json").json()
    spoken = {id(operation(doc, call)) for call, _ in every_call(Core())}
    unspoken = sorted(
        (method, path) for path, methods in doc["paths"].items() for method, op in
        methods.items() if id(op) not in spoken and (method, path) not in NOT_A_CLIENTS)
    assert unspoken == []
