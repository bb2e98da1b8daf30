"""The org repository: an org's settings (its memory switches, agent memory and models).

Settings are parsed by the caller's `parse` (the settings value lives with the switches it
resolves), so an org's settings read here and within a session's view are one value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from app.store.database import Tx

SettingsT = TypeVar("SettingsT")


class OrgRepository:
    """Orgs in one transaction."""

    def __init__(self, tx: Tx) -> None:
        self.tx = tx

    async def settings(
        self, org: str, parse: Callable[[Mapping[str, Any]], SettingsT]
    ) -> SettingsT | None:
        """The org's settings; None when there is no such org."""
        row = await self.tx.row("org_settings", org=org)
        return None if row is None else parse(row["org"])

    async def update(
        self, org: str, changes: Mapping[str, Any], parse: Callable[[Mapping[str, Any]], SettingsT]
    ) -> SettingsT | None:
        """Set the given settings (by their stored names); the org's settings after, or None
        when there is no such org."""
        row = await self.tx.row("update_org_settings", org=org, changes=dict(changes))
        return None if row is None else parse(row["org"])
