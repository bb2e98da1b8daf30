"""The memory commands of S12-S16, validated at the edge into these values."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from app.errors import ValidationError
from app.memory.credentials import credential_reason
from app.memory.values import KINDS

MAX_KEY_LENGTH = 200
MAX_CONTENT_LENGTH = 4000


@dataclass(frozen=True)
class Remember:
    """S13: add or replace the entry under `key`, and make it active."""

    key: str
    content: str
    kind: str


@dataclass(frozen=True)
class Forget:
    """S14: mark the entry under `key` retracted."""

    key: str


@dataclass(frozen=True)
class Configure:
    """S15: `set_use`/`set_generate` say whether the field was sent; None removes an override."""

    use: bool | None = None
    generate: bool | None = None
    set_use: bool = False
    set_generate: bool = False


@dataclass(frozen=True)
class Refresh:
    """S16: run consolidation now."""


Command = Remember | Forget | Configure | Refresh


def check_text(text: str, field: str) -> str:
    """Text that storage can keep: no lone surrogate (JSON's escaped half of a pair)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValidationError("not valid Unicode text (a lone surrogate)", field) from exc
    return text


def check_key(key: str, field: str = "key") -> str:
    """S1: a stable, visible name of 1 to 200 characters."""
    key = check_text(key, field).strip()
    if not key:
        raise ValidationError("a key must not be empty", field)
    if len(key) > MAX_KEY_LENGTH:
        raise ValidationError(f"a key has at most {MAX_KEY_LENGTH} characters", field)
    if any(unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") for ch in key):
        raise ValidationError("a key has no control or invisible characters", field)
    return key


def check_remember(command: Remember, prefix: str = "command.") -> Remember:
    """S1, S10: a valid key and kind, non-empty content, and no credential in it."""
    key = check_key(command.key, f"{prefix}key")
    content = check_text(command.content, f"{prefix}content").strip()
    if not content:
        raise ValidationError("content must not be empty", f"{prefix}content")
    if len(content) > MAX_CONTENT_LENGTH:
        raise ValidationError(
            f"content has at most {MAX_CONTENT_LENGTH} characters", f"{prefix}content"
        )
    if check_text(command.kind, f"{prefix}kind") not in KINDS:
        raise ValidationError(f"kind must be one of {', '.join(KINDS)}", f"{prefix}kind")
    reason = credential_reason(content)
    if reason is not None:
        raise ValidationError(
            f"memory never stores credentials (this looks like a {reason})", f"{prefix}content"
        )
    return Remember(key=key, content=content, kind=command.kind)
