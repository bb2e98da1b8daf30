"""The built-in offline model: no key, no network. It learns clear statements by rule.

It reads the user's messages for a name, a budget, a plainly said preference, a decision, or a
request to remember, and answers in the same JSON shape an OpenAI-compatible model would.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from app.models.base import LEARNING_SCHEMA, ContextItem, ModelRequest

_NAME = re.compile(r"\b(?i:my name is|call me|i am called)\s+([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?)")
_BUDGET = re.compile(
    r"\b(?:(?:my|our|the)\s+)?(?:(\w+)\s+)?budget\s+(?:is|of|will be)\s+"
    r"(?:about\s+|around\s+)?([$€£]?\s?\d[\d,.]*\s?(?:[A-Z]{3}|euros?|dollars?|pounds?|k)?)",
    re.IGNORECASE,
)
_PREFERENCE = re.compile(
    r"\bI\s+(?:really\s+)?(prefer|like|love|hate|dislike|don't like|do not like)\s+"
    r"([^.!?\n]{3,120})",
    re.IGNORECASE,
)
_DECISION = re.compile(
    r"\b(?:we|I)\s+(?:have\s+)?(decided|agreed|chose|will go with)\s+(?:to\s+|on\s+)?"
    r"([^.!?\n]{3,120})",
    re.IGNORECASE,
)
_PROCEDURE = re.compile(
    r"\b(?:please\s+)?(always|never)\s+([a-z][^.!?\n]{3,120})", re.IGNORECASE
)
_REMEMBER = re.compile(r"\bremember\s+(?:that\s+)?([^.!?\n]{3,200})", re.IGNORECASE)
_STOPWORDS = frozenset({"the", "a", "an", "to", "that", "my", "our", "we", "i", "is", "of", "and"})


def slug(text: str, words: int = 4) -> str:
    """A key of the text's first words, in whatever script they are written (S1: words that
    differ make keys that differ)."""
    parts = [w for w in re.findall(r"[^\W_]+", text.lower()) if w not in _STOPWORDS]
    return "-".join(parts[:words]) or "note"


def _sentence(text: str) -> str:
    text = text.strip().rstrip(".")
    return text[0].upper() + text[1:] + "." if text else text


def learn(item: ContextItem) -> Iterator[dict[str, Any]]:
    """The changes one user message supports."""
    text = item.content or ""
    if name := _NAME.search(text):
        yield {"key": "user-name", "content": f"The user's name is {name.group(1)}.",
               "kind": "fact"}
    if budget := _BUDGET.search(text):
        what = (budget.group(1) or "").lower()
        what = "" if what in {"my", "our", "the", "a"} else what
        key = f"{what}-budget" if what else "budget"
        label = f"The {what} budget" if what else "The budget"
        yield {"key": key, "content": f"{label} is {budget.group(2).strip()}.", "kind": "fact"}
    if preference := _PREFERENCE.search(text):
        verb, what = preference.group(1).lower(), preference.group(2)
        yield {"key": f"prefers-{slug(what)}", "kind": "preference",
               "content": _sentence(f"the user {'prefers' if verb == 'prefer' else verb + 's'} "
                                    f"{what}".replace("don'ts", "does not like")
                                    .replace("do nots like", "does not like"))}
    if decision := _DECISION.search(text):
        what = decision.group(2)
        yield {"key": f"decision-{slug(what)}", "kind": "decision",
               "content": _sentence(f"decided to {what}" if decision.group(1).lower() == "decided"
                                    else f"{decision.group(1)} {what}")}
    if remember := _REMEMBER.search(text):
        what = remember.group(1)
        yield {"key": slug(what), "content": _sentence(what), "kind": "fact"}


def lasting(item: ContextItem, person: str | None) -> Iterator[dict[str, Any]]:
    """The lasting experience (A1) one user message supports: a preference the person stated
    about themselves (private to them, A9), a decision, or a procedure ("always ...")."""
    for change in learn(item):
        if change["kind"] == "preference" and person is not None:
            yield {**change, "about": person, "visibility": "private"}
        elif change["kind"] == "decision":
            yield {**change, "about": person, "visibility": "shared"}
    if procedure := _PROCEDURE.search(item.content or ""):
        what = f"{procedure.group(1).lower()} {procedure.group(2)}"
        yield {"key": f"procedure-{slug(what)}", "content": _sentence(what),
               "kind": "procedure", "about": None, "visibility": "shared"}


class BuiltinModel:
    """Rule-based learning from the user's own messages."""

    name = "builtin"

    async def complete(self, request: ModelRequest) -> str:
        learning = request.schema_name == LEARNING_SCHEMA
        known = {entry.key: entry for entry in request.entries}
        changes: dict[str, dict[str, Any]] = {}
        for item in request.items:
            if item.type != "message" or item.role != "user":
                continue
            found = lasting(item, request.person) if learning else learn(item)
            for change in found:
                entry = known.get(change["key"])
                if entry is not None and entry.status == "retracted":
                    continue
                if entry is not None and entry.content == change["content"]:
                    continue
                changes[change["key"]] = {"op": "remember", **change, "sources": [item.id]}
        return json.dumps({"changes": list(changes.values())})
