"""The memory commands of S12-S16, validated at the edge into these values."""

from __future__ import annotations

import asyncio
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from app.domain.agents import AGENT_KINDS, VISIBILITIES, is_agent_key
from app.domain.enums import Visibility
from app.domain.erasures import ERASED_PREFIX, erasures_own
from app.domain.model_names import LINE_BREAKING, MODEL_RULE, is_model_name
from app.domain.principals import Principal
from app.domain.sessions import KINDS
from app.errors import ValidationError
from app.memory.changes.credentials import credential_reason

MAX_KEY_LENGTH = 200
# Arrays and objects within each other in JSON that a client or a model sends: no body or
# answer of ours needs more than 5, and a deeper one would exhaust the checks that walk it.
MAX_DEPTH = 64
MAX_NAME_LENGTH = 200  # an agent's name
MAX_CONTENT_LENGTH = 4000
# The control characters (C0, DEL and C1) but tab and newline: content reaches a model's
# instructions verbatim, where a NUL or an escape sequence (ESC [, or C1's CSI) has no place.
CONTENT_CONTROLS = r"\u0000-\u0008\u000b-\u001f\u007f-\u009f"
CONTENT_CONTROL = re.compile(f"[{CONTENT_CONTROLS}]")
NAME_BREAKING = re.compile(f"[{LINE_BREAKING}]")  # a name is shown on one line
# Up to this many characters of key and content, S10's scan runs on the event loop, where a
# short scan costs less than a hop to a thread and back; a longer one runs in a thread, so that
# it holds no other request up.
SCAN_ON_LOOP = 300

T = TypeVar("T")


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


def too_deep(data: Any, depth: int = 1) -> bool:
    """Whether JSON `data` nests arrays and objects more than MAX_DEPTH deep (stops at the
    limit)."""
    if depth > MAX_DEPTH:
        return True
    if isinstance(data, dict):
        return any(too_deep(value, depth + 1) for value in data.values())
    if isinstance(data, list):
        return any(too_deep(value, depth + 1) for value in data)
    return False


def is_text(text: str) -> bool:
    """Whether storage can keep `text`: it holds no lone surrogate (JSON's escaped half of a
    pair, or a byte that was not UTF-8 in a command line's argument)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_text(text: str, field: str) -> str:
    """Text that storage can keep (`is_text`)."""
    if not is_text(text):
        raise ValidationError("not valid Unicode text (a lone surrogate)", field)
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


def check_agent_name(name: str, field: str = "name") -> str:
    """An agent's name: 1 to MAX_NAME_LENGTH characters of text storage can keep, some of them
    not space, none a control character (a name is shown, and one line)."""
    check_text(name, field)
    if not 1 <= len(name) <= MAX_NAME_LENGTH:
        raise ValidationError(f"a name has 1 to {MAX_NAME_LENGTH} characters", field)
    if not name.strip() or NAME_BREAKING.search(name):
        raise ValidationError("a name is text on one line, not only spaces", field)
    return name


def check_model_name(model: str | None, field: str) -> str | None:
    """A model is `builtin` or `openai:<name>`; None means none is set."""
    if model is None or is_model_name(model):
        return model
    raise ValidationError(MODEL_RULE, field)


def refuse_credential(text: str, field: str) -> str:
    """S10: a 400 on `field` when the text holds a credential."""
    reason = credential_reason(text)
    if reason is not None:
        raise ValidationError(
            f"memory never stores credentials (this looks like a {reason})", field
        )
    return text


def check_content_characters(content: str, field: str) -> str:
    """Content is valid Unicode text with no control character but tab and newline."""
    check_text(content, field)
    if CONTENT_CONTROL.search(content):
        raise ValidationError("content has no control characters but tab and newline", field)
    return content


def check_content(content: str, field: str) -> str:
    """S10: non-empty content of a sane length, with no control character (but tab and
    newline) and no credential in it."""
    content = check_content_characters(content, field).strip()
    if not content:
        raise ValidationError("content must not be empty", field)
    if len(content) > MAX_CONTENT_LENGTH:
        raise ValidationError(f"content has at most {MAX_CONTENT_LENGTH} characters", field)
    return refuse_credential(content, field)


def check_kind(kind: str, allowed: tuple[str, ...], field: str) -> str:
    if check_text(kind, field) not in allowed:
        raise ValidationError(f"kind must be one of {', '.join(allowed)}", field)
    return kind


async def scanned(check: Callable[[], T], length: int) -> T:
    """`check()`, a command's checks with S10's scan of `length` characters: on the event loop
    when they are few (`SCAN_ON_LOOP`), else in a thread."""
    if length <= SCAN_ON_LOOP:
        return check()
    return await asyncio.to_thread(check)


def check_remember(command: Remember) -> Remember:
    """S1, S10: a valid key and kind, non-empty content, and no credential in it. A
    ValidationError names the command's field (`content`); a transport that nests the command
    in a body names it there."""
    key = check_secret_free_key(command.key, "key")
    content = check_content(command.content, "content")
    kind = check_kind(command.kind, KINDS, "kind")
    return Remember(key=key, content=content, kind=kind)


@dataclass(frozen=True)
class AgentRemember:
    """A10: add or replace an agent entry and make it active (the only way back, A6)."""

    key: str
    content: str
    kind: str
    about: str | None = None
    visibility: str = "shared"


@dataclass(frozen=True)
class AgentForget:
    """A10: retract an agent entry; `about` picks that person's private entry of the key."""

    key: str
    about: str | None = None


AgentCommand = AgentRemember | AgentForget


def refuse_erasures_name(name: str, field: str) -> str:
    """A name an erasure gives (`erased-` and its random id) is refused: what a write names so
    would be what the erasure left."""
    if erasures_own(name):
        raise ValidationError(f"{ERASED_PREFIX} and an id name what an erasure left", field)
    return name


def check_secret_free_key(key: str, field: str = "key") -> str:
    """The key a Remember writes: S10 holds for keys too (a key that holds a credential is
    refused), and no key an erasure gave is written again."""
    key = refuse_erasures_name(check_key(key, field), field)
    return refuse_credential(key, field)


def agent_key(key: str, field: str = "key") -> str:
    """An agent key is a key without `@`: a service token sees private entries listed as
    `key@person`, so no key may look like one."""
    key = check_key(key, field)
    if not is_agent_key(key):
        raise ValidationError("an agent memory key has no @", field)
    return key


def check_agent_key(key: str, field: str = "key") -> str:
    """The key a Remember of an agent entry writes: S10's scan, and an agent key."""
    return agent_key(check_secret_free_key(key, field), field)


def check_agent_remember(command: AgentRemember, who: Principal) -> AgentRemember:
    """A1, A5, A9, S10: a lasting kind, a valid visibility, and a private entry about someone;
    a person keeps private entries about themselves only. A ValidationError names the
    command's field, as `check_remember`'s."""
    key = check_agent_key(command.key, "key")
    content = check_content(command.content, "content")
    kind = check_kind(command.kind, AGENT_KINDS, "kind")
    if command.visibility not in VISIBILITIES:
        raise ValidationError(f"visibility is one of {', '.join(VISIBILITIES)}", "visibility")
    about = None if command.about is None else refuse_erasures_name(
        check_key(command.about, "about"), "about")
    if command.visibility == Visibility.PRIVATE:
        if about is None:
            raise ValidationError("a private entry names the person it is about", "visibility")
        if who.person is not None and about != who.person:
            raise ValidationError("a person keeps private entries about themselves only", "about")
    return AgentRemember(key, content, kind, about, command.visibility)


def check_agent_forget(command: AgentForget) -> AgentForget:
    """A10: the entry a Forget names: an agent key, and the person a private one is about,
    read as a Remember reads them. (No credential scan: no entry has such a key to forget.)"""
    key = agent_key(command.key, "key")  # the key first, as a Remember checks it
    about = None if command.about is None else refuse_erasures_name(
        check_key(command.about, "about"), "about")
    return AgentForget(key, about)
