"""Who a request acts for."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Principal:
    """Who a request acts for: a person of an org, or an org's service token (no person), which
    reaches every session of its org and every agent entry. The service itself, working for an
    org (consolidation, learning), acts as a principal with neither."""

    org: str
    person: str | None = None
    service: str | None = None

    def scope(self) -> dict[str, str | None]:
        """The parameters every statement that reaches sessions filters by."""
        return {"org": self.org, "person": self.person}


