"""An org's defaults (SPEC section 1): memory switches, agent memory, the models."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.domain.principals import Principal
from app.domain.sessions import OrgSettings
from app.errors import NotFound
from app.memory.model_names import check_model_name
from app.store.database import Database, Tx


@dataclass
class Orgs:
    """Reading and changing the caller's org settings."""

    db: Database

    async def settings(self, who: Principal) -> OrgSettings:
        async def work(tx: Tx) -> OrgSettings:
            row = await tx.row("org_settings", org=who.org)
            if row is None:
                raise NotFound(f"no org {who.org}")
            return OrgSettings.from_record(row["org"])

        return await self.db.read(work)

    async def update(self, who: Principal, changes: dict[str, Any]) -> OrgSettings:
        for field in ("model", "helperModel"):
            if field in changes:
                check_model_name(changes[field], field)

        async def work(tx: Tx) -> OrgSettings:
            row = await tx.row("update_org_settings", org=who.org, changes=changes)
            if row is None:
                raise NotFound(f"no org {who.org}")
            return OrgSettings.from_record(row["org"])

        return await self.db.write(work)
