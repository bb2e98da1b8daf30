"""An org's defaults (SPEC section 1): memory switches, agent memory, the models."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from app.domain.principals import Principal
from app.domain.sessions import OrgSettings
from app.errors import NotFound
from app.memory.changes.commands import check_model_name
from app.store.database import Database, Tx
from app.store.orgs import ORG_DELETE_STEPS, OrgRepository

DELETE_BATCH = 1000


@dataclass
class Orgs:
    """Reading and changing the caller's org settings."""

    db: Database

    async def settings(self, who: Principal) -> OrgSettings:
        found = await self.db.read(
            lambda tx: OrgRepository(tx).settings(who.org)
        )
        if found is None:
            raise NotFound(f"no org {who.org}")
        return found

    async def update(self, who: Principal, changes: dict[str, Any]) -> OrgSettings:
        for field in ("model", "helperModel"):
            if field in changes:
                check_model_name(changes[field], field)

        found = await self.db.write(
            lambda tx: OrgRepository(tx).update(who.org, changes)
        )
        if found is None:
            raise NotFound(f"no org {who.org}")
        return found


async def warmup_orgs(db: Database, before: int) -> list[str]:
    """The orgs the warm-up made before `before` (ms since the epoch): marked so when made,
    which no other org is, whatever its id."""
    return await db.read(lambda tx: OrgRepository(tx).warmup_orgs(before))


async def org_exists(db: Database, org: str) -> bool:
    return bool(await db.read(lambda tx: OrgRepository(tx).exists(org)))


async def delete_org(
    db: Database, org: str, advance: Callable[[int], None], batch: int = DELETE_BATCH
) -> int:
    """Remove every node of the org from the graph, in batches of one transaction each, the
    nodes that hang from others first: stopped, the same call finishes. How many nodes went;
    NotFound for an org that is not there."""
    if not await db.read(lambda tx: OrgRepository(tx).exists(org)):
        raise NotFound(f"no org {org}")

    async def one_batch(tx: Tx, step: str) -> int:
        return await OrgRepository(tx).delete_batch(org, step, batch)

    total = 0
    for step in ORG_DELETE_STEPS:
        while True:
            deleted = await db.write(partial(one_batch, step=step))
            total += deleted
            advance(deleted)
            if deleted < batch:
                break
    return total
