"""Provenance: the story of one fact of a session, newest change first, with what made each
change and the items it cites (through a fork, on into the entry it was copied from)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.errors import NotFound
from app.memory.sessions.sessions import load_view
from app.memory.values import Change, Item, Principal
from app.store.database import Database, Tx


@dataclass(frozen=True)
class Cited:
    """An item a change cites, with the turn it came in and that turn's session."""

    item: Item
    turn: str | None
    session: str | None


@dataclass(frozen=True)
class StoryStep:
    """One change of an entry's story and what made it: a person, a run (its model and turn),
    a fork's copy, a promotion."""

    change: Change
    person: str | None
    run: str | None
    run_model: str | None
    run_turn: str | None
    cites: tuple[Cited, ...]

    @classmethod
    def from_record(cls, row: Mapping[str, Any]) -> StoryStep:
        return cls(
            change=Change.from_record({**row["change"], "madeBy": row["person"] or row["run"],
                                       "run": row["run"], "cites": []}),
            person=row["person"],
            run=row["run"],
            run_model=row["runModel"],
            run_turn=row["runTurn"],
            cites=tuple(
                Cited(Item.from_record(c["item"]), c["turn"], c["session"]) for c in row["cites"]
            ),
        )


@dataclass(frozen=True)
class Citing:
    """A change of a session entry or an agent entry that cites an item (what it supports)."""

    key: str
    change: str
    op: str | None
    content: str | None
    kind: str | None
    status: str | None
    at: int
    session: str | None = None
    agent: str | None = None
    version: int | None = None
    about: str | None = None
    visibility: str | None = None

    @classmethod
    def from_record(cls, row: Mapping[str, Any]) -> Citing:
        return cls(
            key=row["key"], change=row.get("change") or row["id"], op=row.get("op"),
            content=row.get("content"), kind=row.get("kind"), status=row.get("status"),
            at=row["at"], session=row.get("session"), agent=row.get("agent"),
            version=row.get("version"), about=row.get("about"),
            visibility=row.get("visibility"),
        )


Pair = tuple[list[Citing], list[Citing]]  # (session entries, agent entries)


@dataclass
class Provenance:
    """Reading where a session's facts came from."""

    db: Database

    async def fact_story(self, who: Principal, session_id: str, key: str) -> list[Change]:
        """The changes behind the entry `key` as it stands now, newest first; NotFound for an
        unknown session (or another member's) or a key the session's memory does not hold."""

        async def work(tx: Tx) -> list[Change]:
            view = await load_view(tx, who, session_id)
            entry = view.memory.entries.get(key)
            if entry is None:
                raise NotFound(f"the session's memory has no key {key!r}")
            rows = await tx.rows("entry_histories", **who.scope(), ids=[entry.change])
            return [Change.from_record(c) for row in rows for c in row["changes"]]

        return await self.db.read(work)

    async def stories(
        self, who: Principal, change_ids: Sequence[str]
    ) -> dict[str, list[StoryStep]]:
        """Each entry's story (by the change of its current state), newest first."""

        async def work(tx: Tx) -> dict[str, list[StoryStep]]:
            rows = await tx.rows("entry_story", **who.scope(), ids=list(change_ids))
            return {row["cid"]: [StoryStep.from_record(s) for s in row["story"]] for row in rows}

        return await self.db.read(work)

    async def supports(self, who: Principal, uids: Sequence[str]) -> dict[str, Pair]:
        """For each item (by uid), every session and agent entry change that cites it."""

        async def work(tx: Tx) -> dict[str, Pair]:
            rows = await tx.rows("item_supports", **who.scope(), uids=list(uids))
            return {
                row["uid"]: ([Citing.from_record(r) for r in row["sessionEntries"]],
                             [Citing.from_record(r) for r in row["agentEntries"]])
                for row in rows
            }

        return await self.db.read(work)

    async def shown(self, who: Principal, turn_ids: Sequence[str]) -> dict[str, Pair]:
        """For each turn, the session and agent entries it was given, as they then stood."""

        async def work(tx: Tx) -> dict[str, Pair]:
            rows = await tx.rows("turn_shown", **who.scope(), ids=list(turn_ids))
            return {
                row["tid"]: ([Citing.from_record(r) for r in row["sessionEntries"]],
                             [Citing.from_record(r) for r in row["agentEntries"]])
                for row in rows
            }

        return await self.db.read(work)
