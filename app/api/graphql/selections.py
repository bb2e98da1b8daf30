"""What a document asks of a field, by field name, through fragments: the field's `Asked`,
read once per field of a parsed document.

A parsed document is kept and served again for the same text (the schema's parser cache), and
the names a field selects depend on that document alone (not on variables: `@include` and
`@skip` are not read, as Strawberry's `selected_fields` does not read them), so each field's
`Asked` is kept by the identity of its nodes, and a request that sends a known document reads
none of it again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from graphql import FieldNode, FragmentSpreadNode, InlineFragmentNode, SelectionSetNode


@dataclass(frozen=True, slots=True)
class Asked:
    """One field a document asks, by name, and the fields it asks inside (fragments' fields in
    their place)."""

    name: str
    inside: tuple[Asked, ...]


def asked(info: Any) -> tuple[Asked, ...]:
    """The field `info` resolves, as its document asks it (every place the field is merged
    from: a field asked twice is two `Asked`)."""
    raw = info._raw_info  # Strawberry's Info over graphql-core's (its nodes and fragments)
    nodes: list[FieldNode] = raw.field_nodes
    key = tuple(map(id, nodes))
    hit = _KEPT.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], nodes, strict=True)):
        return hit[1]
    fragments = raw.fragments
    found = tuple(Asked(node.name.value, _inside(node.selection_set, fragments)) for node in nodes)
    if len(_KEPT) >= _KEEP:
        del _KEPT[next(iter(_KEPT))]
    _KEPT[key] = (tuple(nodes), found)  # the nodes held, so that no other node takes their ids
    return found


_KEEP = 512
_KEPT: dict[tuple[int, ...], tuple[tuple[FieldNode, ...], tuple[Asked, ...]]] = {}


def _inside(selection_set: SelectionSetNode | None, fragments: dict[str, Any]) -> tuple[Asked, ...]:
    if selection_set is None:
        return ()
    found: list[Asked] = []
    for selection in selection_set.selections:
        if isinstance(selection, FieldNode):
            found.append(Asked(selection.name.value, _inside(selection.selection_set, fragments)))
        elif isinstance(selection, InlineFragmentNode):
            found += _inside(selection.selection_set, fragments)
        elif isinstance(selection, FragmentSpreadNode):
            fragment = fragments.get(selection.name.value)
            if fragment is not None:
                found += _inside(fragment.selection_set, fragments)
    return tuple(found)


def selected(fields: Sequence[Asked], path: Sequence[str]) -> set[str]:
    """The names of the fields asked within the field at `path` (wherever the path is asked
    more than once, all of them)."""
    if not path:
        return {field.name for field in fields}
    return set().union(
        *(selected(field.inside, path[1:]) for field in fields if field.name == path[0])
    )


def anywhere(fields: Sequence[Asked], names: set[str]) -> bool:
    """Whether a field named one of `names` is asked at any depth."""
    return any(field.name in names or anywhere(field.inside, names) for field in fields)


def asks(fields: Sequence[Asked], path: Sequence[str]) -> bool:
    """Whether the field at `path` is asked."""
    if not path:
        return True
    return any(field.name == path[0] and asks(field.inside, path[1:]) for field in fields)
