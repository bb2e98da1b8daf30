"""The principal repository: tokens (stored as hashes) and the persons and services they grant."""

from __future__ import annotations

from app.domain.tokens import Grant, TokenInfo
from app.store.database import Tx


class PrincipalRepository:
    """Tokens and principals in one transaction."""

    def __init__(self, tx: Tx) -> None:
        self.tx = tx

    async def create(
        self, org: str, person: str | None, service: str | None, id: str, hash: str, now: int,
        expires_at: int | None, default_model: str | None, warmup: bool = False,
    ) -> None:
        """A token for the person (or the org's service), creating the org and the grantee if
        new; a new org takes `default_model` as its model and helper model, and is marked as
        the warm-up's with `warmup`."""
        await self.tx.row(
            "create_principal", org=org, person=person, service=service, id=id, hash=hash,
            now=now, expiresAt=expires_at, defaultModel=default_model, warmup=warmup or None,
        )

    async def grant(self, hash: str, now: int) -> Grant | None:
        """What the token of `hash` grants; None for an unknown token."""
        row = await self.tx.row("find_principal", hash=hash, now=now)
        if row is None:
            return None
        return Grant(row["org"], row["person"], row["service"], bool(row["revoked"]),
                     row["expiresAt"], row["lastUsedAt"])

    async def touch(self, hash: str, now: int, before: int) -> None:
        """Record the token's use at `now`, unless it was recorded at `before` or later."""
        await self.tx.rows("touch_token", hash=hash, now=now, before=before)

    async def of_org(self, org: str) -> list[TokenInfo]:
        """The org's tokens, newest first."""
        rows = await self.tx.rows("list_tokens", org=org)
        return [
            TokenInfo(row["id"], row["kind"], row["name"], row["createdAt"], row["lastUsedAt"],
                      row["expiresAt"], row["revokedAt"])
            for row in rows
        ]

    async def revoke(self, hash: str | None, id: str, now: int) -> str | None:
        """Revoke the token of `hash` or of `id`; answer its id, None for an unknown one."""
        rows = await self.tx.rows("revoke_token", hash=hash, id=id, now=now)
        return None if not rows else str(rows[0]["id"])

    async def has_person(self, org: str, person: str) -> bool:
        """Whether `person` is a person of `org`, and not one whose erasure runs."""
        return await self.tx.row("find_person", org=org, person=person) is not None
