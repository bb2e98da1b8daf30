"""Which model does the work: names are `builtin` or `openai:<name>`, chosen turn first."""

from __future__ import annotations

import re

# An OpenAI-compatible server's model name (`gpt-4o-mini`, `ft:gpt-4o:acme::a1b2`,
# `meta-llama/Llama-3-70B`, a served model's own name): text on one line, not only spaces,
# short enough to be a metric's label.
MAX_MODEL_NAME = 200
# The characters that break a line or control a terminal: C0, DEL, C1, and the line and
# paragraph separators (as JSON Schema's pattern writes them, and Python's re reads them).
LINE_BREAKING = r"\u0000-\u001f\u007f-\u009f\u2028\u2029"
_OPENAI_NAME = re.compile(
    rf"openai:(?=.*\S)[^{LINE_BREAKING}]{{1,{MAX_MODEL_NAME}}}"
)
MODEL_RULE = "a model is `builtin` or `openai:<model name>`"


def is_model_name(name: str) -> bool:
    """Whether `name` names a model: `builtin`, or `openai:` and the OpenAI model's name."""
    return name == "builtin" or _OPENAI_NAME.fullmatch(name) is not None


def resolve_model(*choices: str | None) -> str | None:
    """The first model set among turn, session, agent and org (in that order)."""
    return next((choice for choice in choices if choice), None)
