"""Rows into values. A statement answers a map whose keys are the value's fields in camelCase
(`updated_at` is `updatedAt`): `record` builds any frozen dataclass of `app/domain` from one,
and the few values whose rows say more or less than their fields have a reader of their own
below. A key the row leaves out takes the field's default, or None."""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from app.domain.enums import SessionKind, kind_of, status_of, word_reader
from app.domain.history import Change
from app.domain.items import ITEM_FIELDS, Item
from app.domain.provenance import Cited, Citing, StoryStep
from app.domain.sessions import (
    Entries,
    Entry,
    Memory,
    OrgSettings,
    Overrides,
    Session,
    SessionState,
    SessionView,
    newest_first,
    resolve_switches,
)

T = TypeVar("T")
Row = Mapping[str, Any]
Read = Callable[[Any], Any]


def record(cls: type[T], row: Row) -> T:
    """The value of `cls` that `row` holds."""
    reader = _SPECIAL.get(cls)
    if reader is not None:
        value: T = reader(row)
        return value
    return _build(cls, row)


def _build(cls: type[T], row: Row) -> T:
    plan = _PLANS.get(cls) or _PLANS.setdefault(cls, _plan(cls))
    return cls(**{name: read(row.get(key, default)) for name, key, read, default in plan})


Plan = tuple[tuple[str, str, Read, Any], ...]
_PLANS: dict[type[Any], Plan] = {}


def _plan(cls: type[Any]) -> Plan:
    """For each field of `cls`: its name, its key in a row, how its value is read, and what a
    row without it gives."""
    hints = typing.get_type_hints(cls)
    plan = []
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = None
        plan.append((f.name, _camel(f.name), _reader(hints[f.name]), default))
    return tuple(plan)


def _camel(name: str) -> str:
    first, *rest = name.split("_")
    return first + "".join(part.title() for part in rest)


def _reader(hint: Any) -> Read:
    """How a field of type `hint` is read: a tuple from a list (or null), a value from its map,
    a bool from anything; everything else as it is."""
    origin = typing.get_origin(hint)
    if origin is tuple:
        inner = typing.get_args(hint)[0]
        if dataclasses.is_dataclass(inner):
            return lambda rows: tuple(record(inner, row) for row in rows or ())  # type: ignore[arg-type]
        return lambda values: tuple(values or ())
    if origin is typing.Union or origin is types.UnionType:
        kinds = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        if len(kinds) == 1 and (typing.get_origin(kinds[0]) is tuple or _is_enum(kinds[0])):
            read = _reader(kinds[0])
            return lambda values: None if values is None else read(values)
        return _as_is
    if hint is bool:
        return bool
    if _is_enum(hint):
        return word_reader(hint)
    if dataclasses.is_dataclass(hint):
        return lambda row: record(hint, row)  # type: ignore[arg-type]
    return _as_is


def _is_enum(hint: Any) -> bool:
    return isinstance(hint, type) and issubclass(hint, enum.StrEnum)


def _as_is(value: Any) -> Any:
    return value


def item(row: Row) -> Item:
    """An item; `turn_known` says whether the row said which turn it came in."""
    return Item(
        uid=row["uid"], id=row["id"], type=row["type"], role=row.get("role"),
        content=row.get("content"), app=row.get("app"), author=row.get("author"),
        at=row["at"], seq=row["seq"], turn=row.get("turn"), turn_known="turn" in row,
        erased=bool(row.get("erased")), expired=bool(row.get("expired")),
    )


def org_settings(row: Row) -> OrgSettings:
    """An org's defaults, as the Org node keeps them (a switch not set is on)."""
    return OrgSettings(
        use=row.get("memoryUse", True) is not False,
        generate=row.get("memoryGenerate", True) is not False,
        agent_memory=row.get("agentMemory", True) is not False,
        helper_model=row.get("helperModel"),
        model=row.get("model"),
    )


def entry(row: Row) -> Entry:
    """An entry with its sources as items (`sources`: memory_at, search)."""
    items = tuple(map(item, row.get("sources") or ()))
    return Entry(
        key=row["key"], content=row["content"], kind=kind_of(row["kind"]),
        sources=tuple(source.id for source in items), source_items=items,
        updated_at=row["updatedAt"], status=status_of(row["status"]),
        change=row.get("change") or "",
    )


def session_view(row: Row, fields: tuple[str, ...] = ITEM_FIELDS) -> SessionView:
    """A view from session_views' row (its items read with `fields`: see `Item.from_row`)."""
    s = row["session"]
    org = org_settings(row["org"])
    overrides = Overrides(use=s.get("useOverride"), generate=s.get("generateOverride"))
    entries = newest_first(Entry.from_row(e, fields) for e in row["entries"])
    memory = Memory(
        entries=Entries((entry.key, entry) for entry in entries),
        processed=tuple(row["processed"]),
        settings=resolve_switches(org, overrides),
        overrides=overrides,
    )
    return SessionView(session=record(Session, s), memory=memory, org=org)


def story_step(row: Row) -> StoryStep:
    """One step of a story: the change and what made it, with the items it cites."""
    cited = [c["item"] for c in row["cites"]]
    return StoryStep(
        change=record(Change, {**row["change"], "run": row["run"], "cites": cited}),
        person=row["person"],
        run=row["run"],
        run_model=row["runModel"],
        run_turn=row["runTurn"],
        cites=tuple(Cited(item(c["item"]), c["turn"], c["session"]) for c in row["cites"]),
    )


def citing(row: Row) -> Citing:
    """A change that cites an item; a session entry's row names its change `id`."""
    value = _build(Citing, row)
    return value if value.change else dataclasses.replace(value, change=row["id"])


def state_of(row: Row, session_id: str) -> SessionState:
    """A session's state from lock_session's columns (in a row of its own or of a statement
    that runs it together with others)."""
    current = row["current"]
    return SessionState(
        id=session_id,
        agent=row["agent"],
        kind=SessionKind(row["kind"]),
        head=row["head"],
        depth=row["depth"],
        revision=row["revision"],
        items=row["items"],
        client_item_ids=bool(row["clientItemIds"]),
        person=row["person"],
        model=row["model"],
        agent_model=row["agentModel"],
        agent_shared=bool(row["agentShared"]),
        overrides=Overrides(use=row["useOverride"], generate=row["generateOverride"]),
        org=org_settings(row["orgSettings"]),
        head_shared=bool(row["headShared"]),
        current=None if current is None else current["id"],
    )


_SPECIAL: dict[type[Any], Callable[[Row], Any]] = {
    Item: item,
    OrgSettings: org_settings,
    Entry: entry,
    StoryStep: story_step,
    Citing: citing,
}
