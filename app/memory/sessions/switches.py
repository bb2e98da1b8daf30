"""S4's switches: an org's defaults, what a session overrides, and what is in force."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Switches:
    """The `use` and `generate` switches in force."""

    use: bool
    generate: bool


@dataclass(frozen=True)
class Overrides:
    """What a session set itself; None means it follows the org default."""

    use: bool | None = None
    generate: bool | None = None


@dataclass(frozen=True)
class OrgSettings:
    """An org's defaults."""

    use: bool = True
    generate: bool = True
    agent_memory: bool = True
    helper_model: str | None = None
    model: str | None = None

    @classmethod
    def from_record(cls, row: Mapping[str, Any]) -> OrgSettings:
        return cls(
            use=row.get("memoryUse", True) is not False,
            generate=row.get("memoryGenerate", True) is not False,
            agent_memory=row.get("agentMemory", True) is not False,
            helper_model=row.get("helperModel"),
            model=row.get("model"),
        )


def resolve_switches(org: OrgSettings, overrides: Overrides) -> Switches:
    """S4: each switch follows the org default unless the session overrides it."""
    return Switches(
        use=org.use if overrides.use is None else overrides.use,
        generate=org.generate if overrides.generate is None else overrides.generate,
    )


def switches_of(state: Mapping[str, Any], org: str) -> Switches:
    """The switches in force, from a row with a session's overrides and its org's defaults
    (under `org`: `lock_session`'s `orgSettings`, `run_context`'s `switches`), as the session's
    view resolves them."""
    overrides = Overrides(use=state.get("useOverride"), generate=state.get("generateOverride"))
    return resolve_switches(OrgSettings.from_record(state[org]), overrides)
