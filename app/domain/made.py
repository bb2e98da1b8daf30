"""Values made in bulk: a view's thousand items and entries, read from rows."""

from __future__ import annotations

from typing import Any, TypeVar

T = TypeVar("T")

_new = object.__new__


def made(cls: type[T], fields: dict[str, Any]) -> T:
    """An instance of the dataclass `cls` (one with a `__dict__`: no slots, no `__post_init__`)
    holding `fields`, which name every field of it. A frozen dataclass's `__init__` sets each
    field through `object.__setattr__`, which costs several times the value itself where a
    view reads thousands; this fills the instance's `__dict__` at once, which is all that
    `__init__` leaves behind."""
    value = _new(cls)
    value.__dict__.update(fields)
    return value
