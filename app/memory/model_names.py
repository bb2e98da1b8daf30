"""Which model does the work: names are `builtin` or `openai:<name>`, chosen turn first."""

from __future__ import annotations

from app.errors import ValidationError


def check_model_name(model: str | None, field: str) -> str | None:
    """A model is `builtin` or `openai:<name>`; None means none is set."""
    if model is None:
        return None
    if model == "builtin" or (model.startswith("openai:") and len(model) > len("openai:")):
        return model
    raise ValidationError("a model is `builtin` or `openai:<model name>`", field)


def resolve_model(*choices: str | None) -> str | None:
    """The first model set among turn, session, agent and org (in that order)."""
    return next((choice for choice in choices if choice), None)
