"""The live repository: the marks that say what moved of the sessions and agents watched, and
the heads a session had at its past revisions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from app.domain.principals import Principal
from app.domain.sessions import LiveMarks
from app.store.database import Tx

Kind = Literal["session", "agent"]
Key = tuple[Kind, str]


class LiveRepository:
    """What live views read, in one transaction."""

    def __init__(self, tx: Tx) -> None:
        self.tx = tx

    async def marks(
        self, sessions: Sequence[str], agents: Sequence[str]
    ) -> dict[Key, LiveMarks]:
        """In one statement, each session's revision and its ended runs (how many, the last
        one's end), and each agent's memory version. Never shown to anyone."""
        row = await self.tx.row("live_marks", sessions=list(sessions), agents=list(agents))
        assert row is not None
        marks: dict[Key, LiveMarks] = {}
        for s in row["sessions"]:
            marks[("session", s["id"])] = LiveMarks(
                revision=s["revision"], ended=s["ended"], last_ended=s["lastEnded"]
            )
        for a in row["agents"]:
            marks[("agent", a["id"])] = LiveMarks(version=a["version"])
        return marks

    async def heads(
        self, who: Principal, session_id: str, after: int, until: int
    ) -> dict[int, str]:
        """The head each version of the session made from revision `after` + 1 to `until`, by
        the revision it made (a revision that made no version has none)."""
        rows = await self.tx.rows(
            "revision_heads", **who.scope(), id=session_id, after=after, until=until
        )
        return {row["revision"]: row["head"] for row in rows}
