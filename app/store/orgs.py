"""The org repository: an org's settings (its memory switches, agent memory and models)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.domain.sessions import OrgSettings
from app.store.database import Tx
from app.store.records import org_settings


class OrgRepository:
    """Orgs in one transaction."""

    def __init__(self, tx: Tx) -> None:
        self.tx = tx

    async def settings(self, org: str) -> OrgSettings | None:
        """The org's settings; None when there is no such org."""
        row = await self.tx.row("org_settings", org=org)
        return None if row is None else org_settings(row["org"])

    async def update(self, org: str, changes: Mapping[str, Any]) -> OrgSettings | None:
        """Set the given settings (by their stored names); the org's settings after, or None
        when there is no such org."""
        row = await self.tx.row("update_org_settings", org=org, changes=dict(changes))
        return None if row is None else org_settings(row["org"])

    async def delete_batch(self, org: str, step: str, batch: int) -> int:
        """Delete up to `batch` nodes of the org's record of one kind (`ORG_DELETE_STEPS`);
        how many went."""
        row = await self.tx.row("delete_org_batch", org=org, step=step, batch=batch)
        return 0 if row is None else int(row["deleted"])

    async def warmup_orgs(self, before: int) -> list[str]:
        """The orgs the warm-up made before `before` (ms since the epoch)."""
        return [str(row["org"]) for row in await self.tx.rows("warmup_orgs", before=before)]

    async def exists(self, org: str) -> bool:
        """Whether the org is in the graph."""
        return await self.tx.row("org_settings", org=org) is not None


# The kinds of an org's record in the order they are deleted: each hangs from those after it.
# ("importing": the nodes of an import stopped before its relationships, tied to nothing.)
ORG_DELETE_STEPS = ("importing", "dropped", "agentChanges", "agentEntries", "learningJobs",
                    "changes", "entries", "items", "versions", "sessions", "agents", "members",
                    "org")
