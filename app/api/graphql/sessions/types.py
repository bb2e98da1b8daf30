"""A session's switches and overrides, and the instructions a turn would get."""

from __future__ import annotations

import strawberry


@strawberry.type
class Switches:
    use: bool
    generate: bool


@strawberry.type
class Overrides:
    use: bool | None
    generate: bool | None


@strawberry.type
class Instructions:
    memory: str
    session_keys: list[str]
    agent_keys: list[str]
