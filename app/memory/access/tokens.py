"""Bearer tokens: created from the command line, stored only as a SHA-256 hash; listed by id,
revoked, or expired after a number of days. Each token's last use is recorded at most once a
minute.

A token's lookup is cached for `cache_seconds` (default 2 s, `OPENBOT_MEMORY_TOKEN_CACHE_SECONDS`),
so a request costs no statement for it; a revocation made elsewhere (the CLI, another process) is
therefore honoured within that time, one made by this process at once, and an expiry at its
moment (the cache keeps the expiry time, not the verdict)."""

from __future__ import annotations

import hashlib
import secrets
import time
from dataclasses import dataclass, field, replace

from app.domain.erasures import ERASED_PREFIX, erasures_own
from app.domain.principals import Principal
from app.domain.tokens import Grant, TokenInfo
from app.errors import NotFound, Unauthorized, ValidationError
from app.memory.changes.commands import is_text
from app.memory.ids import DAY_MS, now_ms
from app.store.database import Database, Tx, uncounted
from app.store.orgs import OrgRepository
from app.store.principals import PrincipalRepository

__all__ = ["TokenInfo", "Tokens", "check_name", "token_hash", "token_id"]

TOKEN_PREFIX = "obm_"  # noqa: S105 - a prefix that makes tokens recognisable, not a secret
LAST_USE_EVERY_MS = 60_000
CACHED_TOKENS = 10_000  # the most lookups kept; the oldest go first


def token_id(hash: str) -> str:
    """A token's id, shown by `token list`: from its hash, so it tells nothing of the token."""
    return f"tok-{hash[:12]}"


def token_hash(token: str) -> str:
    """A token's SHA-256; a string that is no text (a lone surrogate) hashes too, to a hash no
    token has."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def bearer(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header (the scheme in any case, spaces
    around the token ignored); None for no header or another scheme."""
    scheme, _, token = (authorization or "").partition(" ")
    return (token.strip() or None) if scheme.lower() == "bearer" else None


def check_name(value: str, field: str) -> str:
    """An org's, person's or service's name. A person's stands in a URL's path
    (`/v1/org/persons/{person}/erase`), so no name holds a `/` or is `.` or `..`, which a
    client's URL would split or resolve away."""
    value = check_text_argument(value, field).strip()
    if not value or len(value) > 100 or any(ch.isspace() for ch in value):
        raise ValidationError(f"{field} is a name of 1 to 100 characters without spaces", field)
    if "/" in value or value in (".", ".."):
        raise ValidationError(f"{field} is a name without / that is not . or ..", field)
    return value


def check_person_name(value: str) -> str:
    """A person's name (`check_name`), which is not one an erasure gives its opaque ids."""
    value = check_name(value, "person")
    if erasures_own(value):
        raise ValidationError(f"{ERASED_PREFIX} and an id name what an erasure left", "person")
    return value


def check_text_argument(value: str, field: str) -> str:
    """A name or token given on a command line, which must be text: a byte that is not UTF-8
    reaches Python as a lone surrogate, which no store can keep."""
    if not is_text(value):
        raise ValidationError(f"{field} is not valid Unicode text (a lone surrogate)", field)
    return value


def check_token(value: str) -> str:
    """A token or a token's id, as `token revoke` is given it: text."""
    return check_text_argument(value, "token").strip()


MAX_EXPIRES_DAYS = 36_500  # a hundred years


def check_expires(days: float) -> float:
    """A token's lifetime in days: above 0, and at most MAX_EXPIRES_DAYS."""
    if not 0 < days <= MAX_EXPIRES_DAYS:
        raise ValidationError(
            f"expires is a number of days above 0 and at most {MAX_EXPIRES_DAYS}", "expires"
        )
    return days


@dataclass
class Tokens:
    """Creating tokens and finding the principal a token acts for."""

    db: Database
    default_model: str | None
    cache_seconds: float = 2.0
    # token hash -> (monotonic time of the lookup, what the graph said of the token)
    _cache: dict[str, tuple[float, Grant]] = field(default_factory=dict)
    # how many times the cache was cleared: a lookup whose read began before a clear keeps
    # nothing, since what it read may be what the clear was for
    _clears: int = 0

    async def create(
        self, org: str, person: str | None, service: str | None = None,
        expires_days: float | None = None, warmup: bool = False,
    ) -> str:
        """Create the org and the person (or the org's service) if new; answer a new token for
        it (shown once, stored hashed). Exactly one of `person` and `service` is given; with
        `expires_days` the token is refused that many days from now. With `warmup`, an org
        made now is marked as the warm-up's (app/api/warmup.py)."""
        if expires_days is not None:
            check_expires(expires_days)
        if (person is None) == (service is None):
            raise ValidationError("a token is for a person or for a service", "person")
        org = check_name(org, "org")
        person = None if person is None else check_person_name(person)
        service = None if service is None else check_name(service, "service")
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        now = now_ms()
        hashed = token_hash(token)
        expires_at = None if expires_days is None else now + int(expires_days * DAY_MS)
        await self.db.write(
            lambda tx: PrincipalRepository(tx).create(
                org, person, service, token_id(hashed), hashed, now, expires_at, self.default_model,
                warmup,
            )
        )
        return token

    async def of_org(self, org: str) -> list[TokenInfo]:
        """The org's tokens, newest first; an org not in the graph is NotFound."""
        org = check_name(org, "org")

        async def listed(tx: Tx) -> list[TokenInfo]:
            if not await OrgRepository(tx).exists(org):
                raise NotFound(f"there is no org {org!r} in this database")
            return await PrincipalRepository(tx).of_org(org)

        return await self.db.read(listed)

    async def revoke(self, token_or_id: str) -> str:
        """Revoke a token, named by itself or by its id; answer its id. Unknown is NotFound."""
        given = check_token(token_or_id)
        hashed = token_hash(given) if given.startswith(TOKEN_PREFIX) else None

        revoked = await self.db.write(
            lambda tx: PrincipalRepository(tx).revoke(hashed, given, now_ms())
        )
        if revoked is None:
            raise NotFound("no such token: give the token or its id (`token list`)")
        self.forget_cached()  # honoured at once here; elsewhere within `cache_seconds`
        return revoked

    def forget_cached(self) -> None:
        """Look every token up again: tokens were revoked here (an erasure revokes a person's)."""
        self._cache.clear()
        self._clears += 1

    async def principal(self, authorization: str | None) -> Principal:
        """The principal of an `Authorization: Bearer <token>` header; 401 when there is none."""
        token = bearer(authorization)
        if token is None:
            raise Unauthorized("send Authorization: Bearer <token>")

        hashed = token_hash(token)
        now = now_ms()
        with uncounted():
            return await self._principal(hashed, now)

    async def _principal(self, hashed: str, now: int) -> Principal:
        grant = await self._lookup(hashed, now)
        if grant is None:
            raise Unauthorized("this token is not known")
        if grant.revoked:
            raise Unauthorized("this token was revoked")
        if grant.expires_at is not None and grant.expires_at <= now:
            raise Unauthorized("this token has expired")
        last = grant.last_used_at
        if last is None or last < now - LAST_USE_EVERY_MS:
            await self.db.write(
                lambda tx: PrincipalRepository(tx).touch(hashed, now, now - LAST_USE_EVERY_MS)
            )
            cached = self._cache.get(hashed)
            if cached is not None and cached[1] is grant:  # the cached lookup knows the use
                self._cache[hashed] = (cached[0], replace(grant, last_used_at=now))
        return Principal(org=grant.org, person=grant.person, service=grant.service)

    async def _lookup(self, hashed: str, now: int) -> Grant | None:
        """What the graph says of a token, from the cache while it is fresh."""
        cached = self._cache.get(hashed)
        if cached is not None and time.monotonic() - cached[0] < self.cache_seconds:
            return cached[1]
        clears = self._clears
        grant = await self.db.read(lambda tx: PrincipalRepository(tx).grant(hashed, now))
        if grant is not None and self.cache_seconds > 0 and clears == self._clears:
            if len(self._cache) >= CACHED_TOKENS:
                del self._cache[next(iter(self._cache))]
            self._cache[hashed] = (time.monotonic(), grant)
        return grant
