"""S10: content that holds a credential is never stored.

Token shapes come from detect-secrets' maintained detectors (AWS, GitHub, Slack, Stripe, JWT,
private keys, basic-auth URLs, ...); rules of our own cover what those miss: a password said in
prose, a URL with user:password or a secret in its query, and long key-like strings named as
keys or tokens.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache, lru_cache
from typing import Any

_PROSE_SECRET = re.compile(
    r"""(?ix)
    \b(?P<name>pass(word|wd|phrase|code)?s?|pwd|pins?|secrets?|api[\s_-]?keys?|access[\s_-]?keys?|
       auth[\s_-]?tokens?|access[\s_-]?tokens?|bearer|tokens?|private[\s_-]?keys?|
       client[\s_-]?secrets?|credentials?|
       (?P<everyday>pw|(wi-?fi|wlan|network|router)[\s_-]?keys?|
                    (door|alarm|gate|lock|safe|garage|pin|security|access)[\s_-]?codes?))\b
    (\s+(for|of|to|on|at)(\s+[\w.@'-]+){1,4}?)?  # "password for the wifi router"
    (\s*(is|was|are|were|will\s+be)\b|\s*(=|:|->)|(?P<possessive>['’]s\b))
    (\s+(now|still|actually|just|currently|again|always)\b)?\s*
    ["'`]?(?P<value>[^\s"'`]{4,})
    """
)
_URL_WITH_USERINFO = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://[^\s/@:]+:[^\s/@]+@")
_URL_SECRET_QUERY = re.compile(
    r"(?i)\bhttps?://\S*[?&](token|access_token|api_key|apikey|key|sig|signature|secret|"
    r"password|auth|x-amz-signature|x-amz-credential|code)=[^\s&]{6,}"
)
# "Bearer <token>", as in an Authorization header.
_BEARER = re.compile(r"(?i)\bbearer(\s+token)?\s*[:=]?\s*[A-Za-z0-9._~+/-]{16,}=*")
_PRIVATE_KEY = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")
_KEY_SHAPES = re.compile(
    r"""\b(
        sk-[A-Za-z0-9_-]{16,}            # OpenAI-style
      | sk_(live|test)_[A-Za-z0-9]{16,}   # Stripe
      | gh[pousr]_[A-Za-z0-9]{30,}        # GitHub
      | github_pat_[A-Za-z0-9_]{30,}
      | xox[abprs]-[A-Za-z0-9-]{10,}      # Slack
      | AKIA[0-9A-Z]{16}                  # AWS access key id
      | AIza[0-9A-Za-z_-]{35}             # Google API key
      | glpat-[A-Za-z0-9_-]{20}           # GitLab
      | npm_[A-Za-z0-9]{36}               # npm
      | pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}  # PyPI
      | eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}  # JWT
    )(?![A-Za-z0-9_-])""",  # not \b: a key may end in "-"
    re.VERBOSE,
)
_WORDS_NOT_SECRETS = frozenset(
    {"unknown", "required", "missing", "reset", "changed", "expired", "needed", "valid", "invalid",
     "wrong", "correct", "secure", "weak", "strong", "private", "public", "shared", "stored",
     "saved", "kept", "encrypted", "hidden", "protected", "known", "written", "managed", "rotated",
     "lost", "forgotten", "different", "long", "short", "too", "also", "still", "being", "hashed",
     "salted", "case-sensitive", "sensitive", "temporary", "empty", "blank", "optional",
     "mandatory", "generated", "random", "unique", "same", "confidential", "personal", "updated",
     "disabled", "enabled", "locked", "revoked", "case", "here", "there", "nowhere", "somewhere",
     "elsewhere"}
)
# Words that name a secret only sometimes ("the secret of good pasta is salt"): the value must
# look like one (a digit, a symbol, a capital inside, or long).
_LOOSE_NAMES = frozenset({"pin", "secret", "token", "credential", "credentials"})
_LOOKS_SECRET = re.compile(r"\d|[#$%&*@^~_+=/\\|<>]|.[A-Z]|^.{20,}$")


def _names_a_secret(text: str, match: re.Match[str], value: str) -> bool:
    """Whether the value a prose match found is a secret. A strict name's always is. A loose
    name's (and a plural's: "passwords are hashed") must look like one. An everyday code or key
    ("the door code is taped under the mailbox") and a possessive ("the password's minimum
    length") speak of a secret more often than they give one: the value must look like one, or
    end the clause ("the wifi key is bluebird.")."""
    if _LOOKS_SECRET.search(value):
        return True
    name = match.group("name").lower()
    if name in _LOOSE_NAMES or (name.endswith("s") and not name.endswith("ss")):
        return False
    if match.group("everyday") is None and match.group("possessive") is None:
        return True
    return match.group("value")[-1] in ".,;!?" or not text[match.end():].strip()


@cache
def _detect_secrets_plugins() -> tuple[Any, ...]:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    skip = {
        # Entropy and keyword plugins flag ordinary prose; our own rules cover those cases.
        "Base64 High Entropy String",
        "Hex High Entropy String",
        "Secret Keyword",
        # An IP address is not a credential.
        "Public IP (ipv4)",
    }
    mapping: dict[str, Any] = get_mapping_from_secret_type_to_class()
    return tuple(plugin() for secret_type, plugin in mapping.items() if secret_type not in skip)


def _detect_secrets_finds(text: str) -> str | None:
    for line in text.splitlines() or [text]:
        plugin: Any
        for plugin in _detect_secrets_plugins():
            if plugin.analyze_line(filename="memory", line=line, line_number=0):
                return str(plugin.secret_type)
    return None


@lru_cache(maxsize=8192)
def credential_reason(text: str) -> str | None:
    """Why `text` looks like it holds a credential, or None when it does not. Answers are
    remembered, so `prescan` can do the CPU-heavy part before a transaction, off the event loop.
    """
    if _PRIVATE_KEY.search(text):
        return "private key"
    if _URL_WITH_USERINFO.search(text):
        return "URL with credentials"
    if _URL_SECRET_QUERY.search(text):
        return "URL with a secret token"
    if _KEY_SHAPES.search(text) or _BEARER.search(text):
        return "API key or token"
    for match in _PROSE_SECRET.finditer(text):
        value = match.group("value").strip(".,;!?")
        if value.lower() in _WORDS_NOT_SECRETS:
            continue
        if not _names_a_secret(text, match, value):
            continue
        return "password or secret in prose"
    found = _detect_secrets_finds(text)
    if found is not None:
        return found
    return None


_URL = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://\S+")
_LONG_TOKEN = re.compile(r"[A-Za-z0-9_\-]{24,}")


def scrub(text: str) -> str:
    """A model provider's error message as every member may read it: no URL (a base URL can
    name a private host or carry a key), no credential, no long key-like string."""
    text = _URL.sub("<url>", text)
    for pattern in (_PRIVATE_KEY, _BEARER, _KEY_SHAPES, _PROSE_SECRET, _LONG_TOKEN):
        text = pattern.sub("<withheld>", text)
    return text[:500]


def strings_in(raw: Any) -> Iterable[str]:
    """Every string in a JSON value (keys of objects too)."""
    if isinstance(raw, str):
        yield raw
    elif isinstance(raw, dict):
        for key, value in raw.items():
            yield from strings_in(key)
            yield from strings_in(value)
    elif isinstance(raw, list):
        for value in raw:
            yield from strings_in(value)


def prescan(raw: Any) -> None:
    """Check every string of a model's answer now (run it in a thread), so that the checks made
    later under the session's lock find their answers remembered, and the lock is held no
    longer than the write needs."""
    for text in strings_in(raw):
        credential_reason(text)
