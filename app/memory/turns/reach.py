"""What the instructions of a turn of a session can reach (S5, S6, A8, A9): the switches in force
and the newest active entries of the session and of its agent, as `instruction_entries` reads
them, cut at the budget."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.errors import NotFound
from app.memory.agents.entries import AgentEntry, as_entry, view_of
from app.memory.sessions.switches import OrgSettings, switches_of
from app.memory.turns.instructions import Instructions, compose
from app.memory.values import Entry, Principal
from app.store.database import Tx, read_whole


@dataclass(frozen=True)
class Reachable:
    """What the instructions of a turn of a session can reach, as `instruction_entries` reads
    it: the switches in force, the session's newest active entries, and its agent's newest
    active entries that the session's person (`viewer`) may see (A9), as many of each as the
    budget could hold."""

    org: str
    viewer: str
    use: bool
    agent_memory: bool
    shared_agent: bool
    session: tuple[Entry, ...]
    agent: tuple[AgentEntry, ...]
    # The keys of the entries tied in time with the last one read that were not read (a cut
    # inside a tie), on each side.
    session_tied: tuple[str, ...] = ()
    agent_tied: tuple[str, ...] = ()

    @classmethod
    def from_record(cls, org: str, row: Mapping[str, Any]) -> Reachable:
        switches = row["reachSwitches"]
        return cls(
            org=org,
            viewer=row["viewer"],
            use=switches_of(switches, "org").use,
            agent_memory=OrgSettings.from_record(switches["org"]).agent_memory,
            shared_agent=bool(row["sharedAgent"]),
            session=tuple(Entry.from_record(e) for e in row["sessionNewest"]),
            agent=tuple(AgentEntry.from_record(e) for e in row["agentNewest"]),
            session_tied=tuple(row["sessionTied"]),
            agent_tied=tuple(row["agentTied"]),
        )

    @property
    def closed(self) -> bool:
        """Whether each side read every entry that comes before its cut in Python's order
        (newest first, then by key): Neo4j cut a tie in its own order of the keys, which an
        entry not read may precede in Python's. Then the whole tie must be read."""
        return _closed(self.session, self.session_tied) and _closed(self.agent, self.agent_tied)

    def shown(self, max_length: int) -> tuple[Instructions, list[str], list[str]]:
        """S5, S6, A8: the memory text a turn gets now, and the change each session key and
        each agent key shown stands for, in the order shown. Session memory follows the
        session's `use`; agent memory the org's `agentMemory`, as the session's person may
        see it (A9): a session always has a person; were one without, it would see shared
        entries only."""
        session = self.session if self.use else ()
        agent: list[AgentEntry] = []
        if self.agent_memory:
            agent = list(view_of(Principal(self.org, person=self.viewer), self.agent).values())
        shown = compose(session, [as_entry(e) for e in agent], max_length, self.shared_agent)
        saw = {e.key: e.change for e in session}
        saw_agent = {e.key: e.change for e in agent}
        return shown, [saw[k] for k in shown.keys], [saw_agent[k] for k in shown.agent_keys]


def read_whole_reach(row: Mapping[str, Any]) -> bool:
    """Whether an `instruction_entries` row was read between two commits: neither the
    session's revision nor its agent's memory version moved while it was read."""
    return bool(
        row["readRevision"] == row["readRevisionAfter"]
        and row["agentVersion"] == row["agentVersionAfter"]
    )


def _closed(read: Sequence[Entry | AgentEntry], tied: Sequence[str]) -> bool:
    """Whether the entries read (in Neo4j's order) hold every one of their tie that comes
    first in Python's order: each tied key not read comes after each key read of its tie."""
    if not tied:
        return True
    last = read[-1].updated_at
    return max(e.key for e in read if e.updated_at == last) < min(tied)


async def reachable(
    tx: Tx, who: Principal, session_id: str, max_length: int, whole_ties: bool = False
) -> Reachable:
    """What the instructions of a turn of the session can reach now, read whole (read again
    while a write moved it, and with whole ties when a cut inside one was not `closed`)."""
    rows = await read_whole(
        lambda _: tx.rows(
            "instruction_entries", **who.scope(), id=session_id, reach=max_length,
            wholeTies=whole_ties,
        ),
        [session_id],
        key=lambda row: session_id,
        settled=read_whole_reach,
    )
    if not rows:
        raise NotFound(f"no session {session_id}")
    found = Reachable.from_record(who.org, rows[0])
    if found.closed:
        return found
    return await reachable(tx, who, session_id, max_length, whole_ties=True)
