"""Prompts: pure functions from context to messages, beside the answer they expect."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from app.memory.values import KINDS, Entry, Item

CONSOLIDATION_SCHEMA_NAME = "memory_changes"


class ProposedChange(BaseModel):
    """One change as the model proposes it; the checks decide whether it applies."""

    model_config = ConfigDict(extra="ignore")

    op: str
    key: str
    content: str | None = None
    kind: str | None = None
    sources: list[str] = []


def memory_changes_schema() -> dict[str, Any]:
    """The JSON schema sent as `response_format` (strict: every field required)."""
    change = {
        "type": "object",
        "properties": {
            "op": {"type": "string", "enum": ["remember", "forget"]},
            "key": {"type": "string"},
            "content": {"type": ["string", "null"]},
            "kind": {"type": ["string", "null"], "enum": [*KINDS, None]},
            "sources": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["op", "key", "content", "kind", "sources"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"changes": {"type": "array", "items": change}},
        "required": ["changes"],
        "additionalProperties": False,
    }


CONSOLIDATION_SYSTEM = "\n".join(
    [
        "You keep the memory of one conversation: a short list of facts, each under a stable key.",
        "Read the NEW ITEMS and propose changes to the CURRENT MEMORY. Rules:",
        "- Reuse the existing key when an item restates or updates the same fact;"
        " one key holds one fact.",
        '- Each change names, in "sources", the ids of the NEW ITEMS that support it'
        " (at least one). Never cite other ids.",
        "- At most one change per key.",
        f"- kind is one of: {', '.join(KINDS)}."
        " Count only clear statements by the user as preferences.",
        "- Never keep passwords, API keys, tokens, private keys, or links that give access.",
        "- Entries marked retracted stay retracted: do not propose them again.",
        '- To remove a fact that is no longer true, use op "forget" with its key'
        " and the item that says so.",
        "- Propose nothing when nothing is worth keeping.",
        'Answer with JSON: {"changes": [{"op": "remember", "key", "content", "kind",'
        ' "sources": [item ids]} | {"op": "forget", "key", "sources": [...]}]}.',
    ]
)


def _item_line(item: Item) -> dict[str, Any]:
    line: dict[str, Any] = {"id": item.id, "type": item.type, "role": item.role}
    if item.app:
        line["app"] = item.app
    line["content"] = item.content
    return line


def consolidation_messages(entries: Sequence[Entry], items: Sequence[Item]) -> list[dict[str, str]]:
    """The chat messages that ask a model for memory changes."""
    memory = [
        {"key": e.key, "content": e.content, "kind": e.kind, "status": e.status} for e in entries
    ]
    user = (
        "CURRENT MEMORY:\n"
        + json.dumps(memory, ensure_ascii=False, indent=1)
        + "\n\nNEW ITEMS:\n"
        + json.dumps([_item_line(item) for item in items], ensure_ascii=False, indent=1)
    )
    return [
        {"role": "system", "content": CONSOLIDATION_SYSTEM},
        {"role": "user", "content": user},
    ]
