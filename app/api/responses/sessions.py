"""What REST answers of sessions: a session and its memory, its timeline's items, its
versions, a fact's changes, and the org's settings a session's switches start from."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, NotRequired

from typing_extensions import TypedDict

from app.api.responses.words import KindWord, StatusWord, words
from app.domain import history as history_values
from app.domain import items as timeline
from app.domain import sessions as values
from app.domain.enums import SessionKind


class Entry(TypedDict):
    """S1: one fact under one key; `sources` are the ids of the items behind it."""

    key: str
    content: str
    kind: KindWord
    sources: list[str]
    updatedAt: int
    status: StatusWord


def entry_json(entry: values.Entry) -> Entry:
    return {
        "key": entry.key,
        "content": entry.content,
        "kind": entry.kind,
        "sources": list(entry.sources),
        "updatedAt": entry.updated_at,
        "status": entry.status,
    }


def entries_json(entries: Iterable[tuple[str, values.Entry]]) -> dict[str, Entry]:
    return {key: entry_json(entry) for key, entry in entries}


class Switches(TypedDict):
    use: bool
    generate: bool


class Overrides(TypedDict):
    """What a session set itself: a switch it does not override is absent."""

    use: NotRequired[bool]
    generate: NotRequired[bool]


def overrides_json(overrides: values.Overrides) -> Overrides:
    out: Overrides = {}
    if overrides.use is not None:
        out["use"] = overrides.use
    if overrides.generate is not None:
        out["generate"] = overrides.generate
    return out


class Memory(TypedDict):
    """S2: a session's memory: its entries by key, newest first, the items consolidation
    processed, the switches in force and what the session overrides."""

    entries: dict[str, Entry]
    processed: list[str]
    settings: Switches
    overrides: Overrides


def memory_json(memory: values.Memory) -> Memory:
    return {
        "entries": entries_json(memory.entries.items()),
        "processed": list(memory.processed),
        "settings": {"use": memory.settings.use, "generate": memory.settings.generate},
        "overrides": overrides_json(memory.overrides),
    }


class Session(TypedDict):
    id: str
    agent: str
    kind: Annotated[str, words(SessionKind)]
    head: str
    revision: int
    person: str | None
    model: str | None
    parent: str | None
    forkedFrom: str | None
    forkedAt: str | None
    createdAt: int


def session_json(session: values.Session) -> Session:
    return {
        "id": session.id,
        "agent": session.agent,
        "kind": session.kind,
        "head": session.head,
        "revision": session.revision,
        "person": session.person,
        "model": session.model,
        "parent": session.parent,
        "forkedFrom": session.forked_from,
        "forkedAt": session.forked_at,
        "createdAt": session.created_at,
    }


class SessionView(TypedDict):
    """The Session view: the session and its memory."""

    session: Session
    memory: Memory


def session_view_json(view: values.SessionView) -> SessionView:
    return {"session": session_json(view.session), "memory": memory_json(view.memory)}


class Sessions(TypedDict):
    sessions: list[SessionView]


class Item(TypedDict):
    """One item of a session's timeline, with the turn it came in (None: a memory edit's)."""

    id: str
    type: str
    role: str | None
    content: str | None
    app: str | None
    author: str | None
    at: int
    turn: str | None


def item_json(item: timeline.Item) -> Item:
    return {
        "id": item.id,
        "type": item.type,
        "role": item.role,
        "content": item.content,
        "app": item.app,
        "author": item.author,
        "at": item.at,
        "turn": item.turn,
    }


class Version(TypedDict):
    id: str
    cause: str
    at: int
    parent: str | None
    revertedFrom: str | None
    added: list[str]
    current: bool


def version_json(version: history_values.Version) -> Version:
    return {
        "id": version.id,
        "cause": version.cause,
        "at": version.at,
        "parent": version.parent,
        "revertedFrom": version.reverted_from,
        "added": list(version.added),
        "current": version.current,
    }


class Versions(TypedDict):
    versions: list[Version]


class VersionRef(TypedDict):
    id: str
    cause: str
    at: int


class VersionMemory(TypedDict):
    entries: dict[str, Entry]
    processed: list[str]


class VersionView(TypedDict):
    """A version as it was: its memory and a page of its timeline."""

    version: VersionRef
    memory: VersionMemory
    items: list[Item]


def version_view_json(
    version: history_values.VersionRef, entries: Iterable[values.Entry], processed: list[str],
    items: Iterable[timeline.Item],
) -> VersionView:
    return {
        "version": {"id": version.id, "cause": version.cause, "at": version.at},
        "memory": {
            "entries": entries_json((entry.key, entry) for entry in entries),
            "processed": processed,
        },
        "items": [item_json(item) for item in items],
    }


class OrgSettings(TypedDict):
    memory: Switches
    agentMemory: bool
    helperModel: str | None
    model: str | None


def org_settings_json(settings: values.OrgSettings) -> OrgSettings:
    return {
        "memory": {"use": settings.use, "generate": settings.generate},
        "agentMemory": settings.agent_memory,
        "helperModel": settings.helper_model,
        "model": settings.model,
    }


class Before(TypedDict):
    content: str | None
    kind: str | None
    status: str | None


class Change(TypedDict):
    """One change of a fact's story: before and after, what made it, when, the items it
    cites."""

    id: str
    op: str
    maker: str
    madeBy: str | None
    key: str
    content: str | None
    kind: str | None
    status: str | None
    before: Before
    at: int
    revision: int | None
    head: str | None
    session: str | None
    run: str | None
    model: str | None
    cites: list[Item]


def change_json(change: history_values.Change) -> Change:
    return {
        "id": change.id,
        "op": change.op,
        "maker": change.maker,
        "madeBy": change.made_by,
        "key": change.key,
        "content": change.content,
        "kind": change.kind,
        "status": change.status,
        "before": {
            "content": change.before_content,
            "kind": change.before_kind,
            "status": change.before_status,
        },
        "at": change.at,
        "revision": change.revision,
        "head": change.head,
        "session": change.session,
        "run": change.run,
        "model": change.model,
        "cites": [item_json(item) for item in change.cites],
    }
