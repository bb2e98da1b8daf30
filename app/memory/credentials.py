"""S10: content that holds a credential is never stored.

Token shapes come from detect-secrets' maintained detectors (AWS, GitHub, Slack, Stripe, JWT,
private keys, basic-auth URLs, ...); rules of our own cover what those miss: a password said in
prose, a URL with user:password or a secret in its query, and long key-like strings named as
keys or tokens.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

_PROSE_SECRET = re.compile(
    r"""(?ix)
    \b(pass(word|wd|phrase|code)?|pwd|pin|secret|api[\s_-]?key|access[\s_-]?key|auth[\s_-]?token|
       access[\s_-]?token|bearer|token|private[\s_-]?key|client[\s_-]?secret|credentials?)\b
    (\s+(for|of|to)\s+[\w.@-]+)?         # "password for the wifi"
    \s*(is|was|=|:|->|are|will\s+be)\s*  # "is", "=", ":"
    ["'`]?(?P<value>[^\s"'`]{4,})
    """
)
_URL_WITH_USERINFO = re.compile(r"(?i)\b[a-z][a-z0-9+.-]*://[^\s/@:]+:[^\s/@]+@")
_URL_SECRET_QUERY = re.compile(
    r"(?i)\bhttps?://\S*[?&](token|access_token|api_key|apikey|key|sig|signature|secret|"
    r"password|auth|x-amz-signature|x-amz-credential|code)=[^\s&]{6,}"
)
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
      | eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}  # JWT
    )\b""",
    re.VERBOSE,
)
_WORDS_NOT_SECRETS = frozenset(
    {"unknown", "required", "missing", "reset", "changed", "expired", "needed", "valid", "invalid",
     "wrong", "correct", "secure", "weak", "strong", "private", "public", "shared", "stored"}
)


@cache
def _detect_secrets_plugins() -> tuple[Any, ...]:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    skip = {
        # Entropy and keyword plugins flag ordinary prose; our own rules cover those cases.
        "Base64 High Entropy String",
        "Hex High Entropy String",
        "Secret Keyword",
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


def credential_reason(text: str) -> str | None:
    """Why `text` looks like it holds a credential, or None when it does not."""
    if _PRIVATE_KEY.search(text):
        return "private key"
    if _URL_WITH_USERINFO.search(text):
        return "URL with credentials"
    if _URL_SECRET_QUERY.search(text):
        return "URL with a secret token"
    if _KEY_SHAPES.search(text):
        return "API key or token"
    for match in _PROSE_SECRET.finditer(text):
        if match.group("value").lower().strip(".,;!?") not in _WORDS_NOT_SECRETS:
            return "password or secret in prose"
    found = _detect_secrets_finds(text)
    if found is not None:
        return found
    return None
