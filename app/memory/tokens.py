"""Bearer tokens: created from the command line, stored only as a SHA-256 hash."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from app.errors import Unauthorized, ValidationError
from app.memory.ids import now_ms
from app.memory.values import Principal
from app.store.database import Database, Tx

TOKEN_PREFIX = "obm_"  # noqa: S105 - a prefix that makes tokens recognisable, not a secret


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def check_name(value: str, field: str) -> str:
    value = value.strip()
    if not value or len(value) > 100 or any(ch.isspace() for ch in value):
        raise ValidationError(f"{field} is a name of 1 to 100 characters without spaces", field)
    return value


@dataclass
class Tokens:
    """Creating tokens and finding the principal a token acts for."""

    db: Database
    default_model: str | None

    async def create(self, org: str, person: str) -> str:
        """Create the org and person if new; answer a new token (shown once, stored hashed)."""
        org, person = check_name(org, "org"), check_name(person, "person")
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        await self.db.write(
            lambda tx: tx.row(
                "create_principal",
                org=org,
                person=person,
                hash=token_hash(token),
                now=now_ms(),
                defaultModel=self.default_model,
            )
        )
        return token

    async def principal(self, authorization: str | None) -> Principal:
        """The principal of an `Authorization: Bearer <token>` header; 401 when there is none."""
        if not authorization:
            raise Unauthorized("send Authorization: Bearer <token>")
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthorized("send Authorization: Bearer <token>")

        async def work(tx: Tx) -> Principal | None:
            row = await tx.row("find_principal", hash=token_hash(token.strip()))
            return Principal(org=row["org"], person=row["person"]) if row else None

        principal = await self.db.read(work)
        if principal is None:
            raise Unauthorized("this token is not known")
        return principal
