"""Opaque ids and the clock."""

from __future__ import annotations

import secrets
import time
import uuid


def now_ms() -> int:
    return int(time.time() * 1000)


def new_id(prefix: str) -> str:
    """A random id with a readable prefix, e.g. `ses-3f2a...`."""
    return f"{prefix}-{uuid.uuid4().hex}"


def new_head() -> str:
    """An opaque version id, e.g. `v-7d21c0a4e9b1`."""
    return f"v-{secrets.token_hex(6)}"


# An item's id by its place in the branch: the prefix, then the seq zero-padded to the digits.
# (record_memory_edit.cypher builds the same from these two, passed as parameters.)
ITEM_PREFIX = "i-"
ITEM_DIGITS = 2


def item_id(seq: int) -> str:
    """The id of the seq-th item of a branch, e.g. `i-02`."""
    return f"{ITEM_PREFIX}{seq:0{ITEM_DIGITS}d}"
