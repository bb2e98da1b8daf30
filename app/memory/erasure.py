"""Erasure: a person's data (or one session's) made tombstones everywhere it went.

An erasure goes part by part, each in a transaction of its own under the lock a command takes
(a session's, an agent's): the person's sessions, then every agent of the org, then what is left
of the person (items they authored elsewhere, their id where it is stored as a value, their
tokens). Each part erases only what is not yet erased, so an erasure that stopped half way is
resumed by asking again: the running `Erasure` record keeps its opaque id and its counts.
Erased content leaves every view: the reads follow the kept state (an entry's CURRENT change,
an agent's HAS_MEMORY entries, a session's agent), which an erasure unlinks.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from app.domain.erasures import ERASED_PREFIX, Erasure
from app.domain.principals import Principal
from app.errors import Forbidden, NotFound
from app.memory.changes.checks import ERASED_WITHHELD, dropped_about
from app.memory.ids import new_id, now_ms
from app.store.database import Database, Tx
from app.store.erasures import ErasureRepository


def require_service(who: Principal) -> None:
    """Erasures are asked for, and listed, with an org's service token only."""
    if who.person is not None:
        raise Forbidden("only an org's service token erases a person or lists erasures")


async def keep_missing_marks(db: Database, batch: int = 500) -> None:
    """Give a graph written before an erasure kept them the marks it reads (once, at start and
    after an import; each batch a transaction of its own): `expired` on the items retention
    emptied, no opaque id on the records of erasures done, and on each learning record of a
    dropped change whom it is about."""
    while await db.write(lambda tx: ErasureRepository(tx).mark_expired_items(batch)):
        pass
    await db.write(lambda tx: ErasureRepository(tx).forget_replacements())

    async def name_batch(tx: Tx) -> int:
        erasures = ErasureRepository(tx)
        found = await erasures.dropped_without_about(batch)
        if found:
            await erasures.name_dropped_about(
                {ref: _about_in(proposal) or "" for ref, proposal in found}
            )
        return len(found)

    while await db.write(name_batch):
        pass


async def _agents_citing(tx: Tx, org: str, sessions: Sequence[str]) -> list[str]:
    return await ErasureRepository(tx).agents_citing(org, sessions)


def _about_in(proposal: str) -> str | None:
    """Whom a record's proposal (the model's change as JSON) says it is about."""
    try:
        return dropped_about(json.loads(proposal))
    except (ValueError, RecursionError):  # a withheld proposal, or none JSON can read
        return None


@dataclass
class Erasures:
    """Erasing persons and sessions, and the record of erasures."""

    db: Database
    on_revoke: Callable[[], None] = lambda: None

    async def erase_person(self, who: Principal, person: str) -> Erasure:
        """Erase every trace of `person` in `who`'s org; resumes a running erasure of them, and
        answers the last one when nothing of them is left. 404 for a person the org never had."""
        require_service(who)
        return await self.erase(who.org, person, who.service)

    async def erase(
        self, org: str, person: str, by: str | None,
        advance: Callable[[int], None] = lambda parts: None,
    ) -> Erasure:
        """The erasure of `person` of `org` (the command line's, with no principal); `advance`
        is told each session and agent part done (a progress bar's steps)."""
        replacement = new_id(ERASED_PREFIX.rstrip("-"))
        erasure = await self.db.write(
            lambda tx: ErasureRepository(tx).begin(
                org, person, new_id("era"), replacement, now_ms(), by
            )
        )
        if erasure is None:
            last = await self.db.read(lambda tx: ErasureRepository(tx).last(org, person))
            if last is None:
                raise NotFound(f"no person {person} in your org")
            return last
        replacement = erasure.replacement or replacement
        # No session of the person starts while the erasure runs, but an agent may (a
        # promotion of one of their sessions): the scope is read again until it holds nothing
        # new. After a round that erased sessions, every agent's part runs again, for the
        # entries that rest on those sessions' items.
        erased_sessions: set[str] = set()
        erased_agents: set[str] = set()
        while True:
            sessions, agents = await self.db.read(
                lambda tx: ErasureRepository(tx).scope(org, person)
            )
            new_sessions = [s for s in sessions if s not in erased_sessions]
            new_agents = agents if new_sessions else [a for a in agents
                                                       if a not in erased_agents]
            if not new_sessions and not new_agents:
                break
            citing = await self.db.read(
                partial(_agents_citing, org=org, sessions=new_sessions)
            )
            await self._erase_parts(org, erasure.id, new_sessions, new_agents, person,
                                    replacement, set(citing), advance)
            erased_sessions.update(new_sessions)
            erased_agents.update(agents)
        done = await self.db.write(
            lambda tx: ErasureRepository(tx).finish(
                org, erasure.id, person, replacement, now_ms(), ERASED_WITHHELD
            )
        )
        self.on_revoke()
        return done

    async def delete_session(self, who: Principal, session: str) -> None:
        """Erase one session's items and the memory derived from them (its person's or a
        service token's); afterwards the session is not found. Its forks keep their memory.
        A session deleted already is not found, and its agents' part runs again: a deletion
        that stopped before it finishes when asked again."""
        erased_already = await self.db.read(
            lambda tx: ErasureRepository(tx).deletable_session(who.org, who.person, session)
        )
        if erased_already is None:
            raise NotFound(f"no session {session}")
        if not erased_already and not await self.db.write(
            lambda tx: ErasureRepository(tx).erase_session(
                who.org, session, None, None, None, ERASED_WITHHELD, reach=who.person
            )
        ):
            raise NotFound(f"no session {session}")
        agents = await self.db.read(partial(_agents_citing, org=who.org, sessions=[session]))
        await self._erase_parts(who.org, None, [], agents, None, None, citing=set(agents))
        if erased_already:
            raise NotFound(f"no session {session}")

    async def _erase_parts(
        self, org: str, erasure: str | None, sessions: Sequence[str], agents: Sequence[str],
        person: str | None, replacement: str | None, citing: set[str],
        advance: Callable[[int], None] = lambda parts: None,
    ) -> None:
        """The sessions' parts, then the agents' (`citing`: those citing the sessions' items,
        whose memory's version the agent part moves), each told to `advance` once done."""
        async def session_part(tx: Tx, session: str) -> None:
            await ErasureRepository(tx).erase_session(
                org, session, erasure, person, replacement, ERASED_WITHHELD
            )

        async def agent_part(tx: Tx, agent: str) -> None:
            await ErasureRepository(tx).erase_agent_entries(
                org, agent, erasure, person, replacement, ERASED_WITHHELD,
                advance=agent in citing,
            )

        for session in sessions:  # one transaction each, under the session's lock
            await self.db.write(partial(session_part, session=session))
            advance(1)
        for agent in agents:  # one transaction each, under the agent's lock
            await self.db.write(partial(agent_part, agent=agent))
            advance(1)

    async def of_org(self, who: Principal) -> Sequence[Erasure]:
        """The org's erasures, newest first (service tokens only)."""
        require_service(who)
        return await self.db.read(lambda tx: ErasureRepository(tx).of_org(who.org))
