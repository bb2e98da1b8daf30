"""Which model does the work: names are `builtin` or `openai:<name>`, chosen turn first."""

from __future__ import annotations


def is_model_name(name: str) -> bool:
    """Whether `name` names a model: `builtin`, or `openai:` and the OpenAI model's name."""
    return name == "builtin" or (name.startswith("openai:") and len(name) > len("openai:"))


def resolve_model(*choices: str | None) -> str | None:
    """The first model set among turn, session, agent and org (in that order)."""
    return next((choice for choice in choices if choice), None)
