"""A client of the OpenBot memory service: `OpenBotMemory` (blocking) and
`AsyncOpenBotMemory` (asyncio), with the same methods; typed answers (`models`) and one
exception class per error `_tag` (`errors`)."""

from __future__ import annotations

from openbot_memory_client.aio import AsyncOpenBotMemory
from openbot_memory_client.client import OpenBotMemory
from openbot_memory_client.core import KEEP
from openbot_memory_client.errors import (
    AgentConflict,
    BadResponse,
    Forbidden,
    GraphQLError,
    InternalError,
    MethodNotAllowed,
    NotFound,
    OpenBotMemoryError,
    PayloadTooLarge,
    SessionConflict,
    Unauthorized,
    Unavailable,
    Unreachable,
    ValidationError,
)
from openbot_memory_client.models import (
    AgentForget,
    AgentMemory,
    AgentRemember,
    Configure,
    Forget,
    Refresh,
    Remember,
    SessionView,
    TurnItem,
)

__all__ = [
    "KEEP",
    "AgentConflict",
    "AgentForget",
    "AgentMemory",
    "AgentRemember",
    "AsyncOpenBotMemory",
    "BadResponse",
    "Configure",
    "Forbidden",
    "Forget",
    "GraphQLError",
    "InternalError",
    "MethodNotAllowed",
    "NotFound",
    "OpenBotMemory",
    "OpenBotMemoryError",
    "PayloadTooLarge",
    "Refresh",
    "Remember",
    "SessionConflict",
    "SessionView",
    "TurnItem",
    "Unauthorized",
    "Unavailable",
    "Unreachable",
    "ValidationError",
]
