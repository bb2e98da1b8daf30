"""What every model adapter takes and answers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

LEARNING_SCHEMA = "agent_memory_changes"  # the response format of agent learning's requests


class ModelError(Exception):
    """The model failed: an error, a timeout, or an answer that is not what was asked."""


@dataclass(frozen=True)
class ContextItem:
    """An item as a model may read it (the built-in model reads these, not the prompt text)."""

    id: str
    type: str
    role: str | None
    content: str | None
    app: str | None
    author: str | None = None


@dataclass(frozen=True)
class ContextEntry:
    key: str
    content: str
    kind: str
    status: str


@dataclass(frozen=True)
class ModelRequest:
    """A structured-output request: messages, the schema's name and the schema."""

    messages: Sequence[dict[str, str]]
    schema_name: str
    schema: dict[str, Any]
    items: Sequence[ContextItem]
    entries: Sequence[ContextEntry]
    person: str | None = None  # the person of the session (agent learning, A5)


class Model(Protocol):
    """A model answers the message content: JSON text, to be parsed and checked by the caller."""

    name: str

    async def complete(self, request: ModelRequest) -> str: ...
