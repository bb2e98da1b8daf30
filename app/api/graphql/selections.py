"""What a document asks, read off Strawberry's selected fields: by field name, through
fragments."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from strawberry.types.nodes import SelectedField, Selection


def selected(selections: Iterable[Selection], path: Sequence[str]) -> set[str]:
    """The names of the fields a selection asks for within the field at `path` (wherever the
    path is asked more than once, all of them)."""
    names: set[str] = set()
    for selection in selections:
        if not isinstance(selection, SelectedField):
            names |= selected(selection.selections, path)
        elif not path:
            names.add(selection.name)
        elif selection.name == path[0]:
            names |= selected(selection.selections, path[1:])
    return names


def anywhere(selections: Iterable[Selection], names: set[str]) -> bool:
    """Whether a selection asks, at any depth, for a field named one of `names`."""
    return any(
        (isinstance(selection, SelectedField) and selection.name in names)
        or anywhere(selection.selections, names)
        for selection in selections
    )


def asks(selections: Iterable[Selection], path: Sequence[str]) -> bool:
    """Whether a selection asks for the field at `path`."""
    if not path:
        return True
    for selection in selections:
        if isinstance(selection, SelectedField):
            if selection.name == path[0] and asks(selection.selections, path[1:]):
                return True
        elif asks(selection.selections, path):
            return True
    return False
