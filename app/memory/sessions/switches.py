"""S4's switches in force, from a row that holds a session's overrides and its org's defaults."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.domain.sessions import OrgSettings, Overrides, Switches, resolve_switches


def switches_of(state: Mapping[str, Any], org: str) -> Switches:
    """The switches in force, from a row with a session's overrides and its org's defaults
    (under `org`: `lock_session`'s `orgSettings`, `run_context`'s `switches`), as the session's
    view resolves them."""
    overrides = Overrides(use=state.get("useOverride"), generate=state.get("generateOverride"))
    return resolve_switches(OrgSettings.from_record(state[org]), overrides)
