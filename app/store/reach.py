"""What the instructions of a session's turn can reach (S5, A9): the switches in force and the
newest active entries of the session and of its agent, read by `instruction_entries`, alone
(a session's instructions) or together with the session's lock (a turn's)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.domain.agents import AgentEntry
from app.domain.principals import Principal
from app.domain.sessions import Overrides, resolve_switches
from app.domain.turns import Reachable
from app.errors import NotFound
from app.store.database import Tx, read_whole
from app.store.records import entry, org_settings, record


def reach_of(org: str, row: Mapping[str, Any]) -> Reachable:
    """What a turn's instructions can reach, from instruction_entries' columns."""
    switches = row["reachSwitches"]
    settings = org_settings(switches["org"])
    overrides = Overrides(use=switches["useOverride"], generate=switches["generateOverride"])
    return Reachable(
        org=org,
        viewer=row["viewer"],
        use=resolve_switches(settings, overrides).use,
        shared_agent=bool(row["sharedAgent"]),
        session=tuple(entry(e) for e in row["sessionNewest"]),
        agent=tuple(record(AgentEntry, e) for e in row["agentNewest"]),
        session_tied=tuple(row["sessionTied"]),
        agent_tied=tuple(row["agentTied"]),
    )


def read_whole_reach(row: Mapping[str, Any]) -> bool:
    """Whether an `instruction_entries` row was read between two commits: neither the
    session's revision nor its agent's memory version moved while it was read."""
    return bool(
        row["readRevision"] == row["readRevisionAfter"]
        and row["agentVersion"] == row["agentVersionAfter"]
    )


class ReachRepository:
    """What turns of sessions can reach, in one transaction, in the caller's scope."""

    def __init__(self, tx: Tx) -> None:
        self.tx = tx

    async def reach(
        self, who: Principal, session_id: str, max_length: int, whole_ties: bool = False
    ) -> Reachable:
        """What the instructions of a turn of the session can reach now, read whole (read
        again while a write moved it, and with whole ties when a cut inside one was not
        `closed`)."""
        rows = await read_whole(
            lambda _: self.tx.rows(
                "instruction_entries", **who.scope(), id=session_id, reach=max_length,
                wholeTies=whole_ties,
            ),
            [session_id],
            key=lambda row: session_id,
            settled=read_whole_reach,
        )
        if not rows:
            raise NotFound(f"no session {session_id}")
        found = reach_of(who.org, rows[0])
        if found.closed:
            return found
        return await self.reach(who, session_id, max_length, whole_ties=True)
