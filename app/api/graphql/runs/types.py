"""What a consolidation run dropped."""

from __future__ import annotations

import strawberry


@strawberry.type
class DroppedChange:
    """A change a model proposed that broke a rule (S9, S10), and which one."""

    op: str
    key: str
    reason: str
    proposal: str
