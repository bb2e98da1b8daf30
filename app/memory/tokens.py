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

    async def create(self, org: str, person: str | None, service: str | None = None) -> str:
        """Create the org and the person (or the org's service) if new; answer a new token for
        it (shown once, stored hashed). Exactly one of `person` and `service` is given."""
        if (person is None) == (service is None):
            raise ValidationError("a token is for a person or for a service", "person")
        org = check_name(org, "org")
        person = None if person is None else check_name(person, "person")
        service = None if service is None else check_name(service, "service")
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        await self.db.write(
            lambda tx: tx.row(
                "create_principal",
                org=org,
                person=person,
                service=service,
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
            if row is None:
                return None
            return Principal(org=row["org"], person=row["person"], service=row["service"])

        principal = await self.db.read(work)
        if principal is None:
            raise Unauthorized("this token is not known")
        return principal
