"""An org's defaults (SPEC section 1): memory switches, agent memory, the models."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.domain.principals import Principal
from app.domain.sessions import OrgSettings
from app.errors import NotFound
from app.memory.model_names import check_model_name
from app.store.database import Database
from app.store.orgs import OrgRepository


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
