"""`watch`: the `memoryChanged` subscription over graphql-transport-ws, as Session views.

The protocol is messages only (`connection_init` with the token, `connection_ack`,
`subscribe`, then `next` per view, answering `ping` with `pong`); both clients share it here
and only read and write their sockets. A view heard this way is the REST Session view: the
GraphQL answer's enums in lower case and its entries (at most `MAX_ENTRIES` of them) by key.
"""

from __future__ import annotations

import json
from typing import Any

from openbot_memory_client import models as m
from openbot_memory_client.errors import OpenBotMemoryError, Unauthorized, graphql_error_of

PROTOCOL = "graphql-transport-ws"
MAX_ENTRIES = 200  # a connection's largest page

SUBSCRIPTION = """subscription($id: ID!) { memoryChanged(sessionId: $id) {
  id kind head revision person model createdAt forkedAt
  agent { id } parent { id } forkedFrom { id }
  memory { processed settings { use generate } overrides { use generate }
    entries(first: MAX) { nodes { key content kind status updatedAt sources { id } } } } } }
""".replace("MAX", str(MAX_ENTRIES))


def socket_url(base_url: str) -> str:
    """The WebSocket URL of the service's `/graphql`."""
    if base_url.startswith("https://"):
        return "wss://" + base_url.removeprefix("https://").rstrip("/") + "/graphql"
    return "ws://" + base_url.removeprefix("http://").rstrip("/") + "/graphql"


def init(token: str) -> str:
    return json.dumps({"type": "connection_init",
                       "payload": {"Authorization": f"Bearer {token}"}})


def subscribe(session_id: str, op: str = "1") -> str:
    return json.dumps({"id": op, "type": "subscribe",
                       "payload": {"query": SUBSCRIPTION, "variables": {"id": session_id}}})


PONG = json.dumps({"type": "pong"})


class Ended(Exception):
    """The subscription completed: the service has nothing more to send."""


def acked(raw: str | bytes) -> tuple[bool, str]:
    """A message before the subscription: (whether it is `connection_ack`, what to answer)."""
    message: dict[str, Any] = json.loads(raw)
    kind = message.get("type")
    if kind == "ping":
        return False, PONG
    if kind == "connection_ack":
        return True, ""
    if kind == "error" or kind == "complete":
        read(raw)
    return False, ""


def read(raw: str | bytes) -> tuple[str, m.SessionView | None]:
    """One message: (what to answer, or "" for nothing; the view it carries, if any)."""
    message: dict[str, Any] = json.loads(raw)
    kind = message.get("type")
    if kind == "ping":
        return PONG, None
    if kind in ("connection_ack", "pong"):
        return "", None
    if kind == "next":
        payload = message.get("payload") or {}
        if payload.get("errors"):
            raise graphql_error_of(payload["errors"][0], None)
        return "", session_view(payload["data"]["memoryChanged"])
    if kind == "error":
        errors = message.get("payload") or [{}]
        raise graphql_error_of(errors[0], None)
    if kind == "complete":
        raise Ended
    raise OpenBotMemoryError(f"unexpected message on the socket: {kind}")


def closed(code: int | None, reason: str) -> OpenBotMemoryError:
    """The error a socket closed by the service means (4403: the token was refused)."""
    if code == 4403:
        return Unauthorized(reason or "the service refused the token")
    return OpenBotMemoryError(f"the socket closed ({code}): {reason}")


def _lower(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


def _id(value: Any) -> Any:
    return value["id"] if isinstance(value, dict) else None


def session_view(data: dict[str, Any]) -> m.SessionView:
    """A GraphQL Session (the subscription's selection) as the REST Session view."""
    memory = data["memory"]
    entries = {
        node["key"]: {
            **node,
            "kind": _lower(node["kind"]),
            "status": _lower(node["status"]),
            "sources": [source["id"] for source in node["sources"]],
        }
        for node in memory["entries"]["nodes"]
    }
    return m.SessionView.model_validate({
        "session": {
            **{key: data[key] for key in ("id", "head", "revision", "person", "model",
                                           "createdAt", "forkedAt")},
            "kind": _lower(data["kind"]),
            "agent": _id(data["agent"]) or "",
            "parent": _id(data["parent"]),
            "forkedFrom": _id(data["forkedFrom"]),
        },
        "memory": {
            "entries": entries,
            "processed": memory["processed"],
            "settings": memory["settings"],
            "overrides": memory["overrides"],
        },
    })
