"""The JSON Schema of a field that holds one word of a domain enum: the domain keeps such a
field as a `StrEnum` member, which is its word; the answer carries the word, and its schema
names the words."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import WithJsonSchema

from app.domain.enums import Kind, Status


def words(enum: type[StrEnum]) -> WithJsonSchema:
    """The JSON Schema of a field that holds one word of `enum`."""
    return WithJsonSchema({"type": "string", "enum": [member.value for member in enum]})


KindWord = Annotated[str, words(Kind)]


StatusWord = Annotated[str, words(Status)]
