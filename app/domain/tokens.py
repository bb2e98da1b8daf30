"""Bearer tokens: what a token grants, and what `token list` shows of one."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TokenInfo:
    """What `token list` shows of a token: never the token or its hash."""

    id: str
    kind: str  # "person" or "service"
    name: str
    created_at: int
    last_used_at: int | None
    expires_at: int | None
    revoked_at: int | None


@dataclass(frozen=True)
class Grant:
    """What the graph says of a token: whom it acts for, and whether it may still be used."""

    org: str
    person: str | None
    service: str | None
    revoked: bool
    expires_at: int | None
    last_used_at: int | None
