"""Opaque ids and the clock."""

from __future__ import annotations

import secrets
import time
import uuid

# A day on the clock of `now_ms`.
DAY_MS = 24 * 60 * 60 * 1000


def now_ms() -> int:
    return int(time.time() * 1000)


def new_id(prefix: str) -> str:
    """A random id with a readable prefix, e.g. `ses-3f2a...`."""
    return f"{prefix}-{uuid.uuid4().hex}"


def new_head() -> str:
    """An opaque version id, e.g. `v-7d21c0a4e9b1`."""
    return f"v-{secrets.token_hex(6)}"

