"""Large graphs for the benchmark, written through the service's own statements.

Turns go through `record_turn.cypher`, entries through `queue_run`/`claim_run`/
`apply_consolidation.cypher` (a consolidation run that kept them, citing the turns' items) and
agent entries through `lock_agent`/`apply_agent_changes.cypher`, with the parameters the
service builds (app/memory/turns/turns.py, consolidation.py, agent_memory.py): the graph is the one
organic sessions leave, only made many turns per transaction. The sessions themselves are
made through the REST API, so they start as any other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from app.domain.agents import AgentEdit, MadeBy
from app.domain.enums import ChangeOp, Kind, Maker, Status, Visibility
from app.domain.items import item_id
from app.memory.ids import new_head, new_id, now_ms
from app.store.agent_memory import AgentMemoryRepository
from app.store.database import Database, Tx

# Items written per transaction: big enough that a million items is a few hundred commits,
# small enough for the local Neo4j's 512 MB heap.
ITEMS_PER_TX = 4000
ENTRIES_PER_RUN = 1000
AGENT_ENTRIES_PER_VERSION = 1000


def progress(console: Console | None = None) -> Progress:
    """A rich progress bar on stderr; rich draws it live on a terminal and, in a log, only
    once the task ends (no carriage returns flood the file)."""
    return Progress(
        TextColumn("{task.description:<28}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console or Console(stderr=True),
        transient=False,
    )


def reporter(bar: Progress) -> Callable[[str, int, int], None]:
    """`report(label, done, total)` for a loop that counts its steps: a task of `bar` per label."""
    tasks: dict[str, TaskID] = {}

    def report(label: str, done: int, total: int) -> None:
        if label not in tasks:
            tasks[label] = bar.add_task(label, total=total)
        bar.update(tasks[label], completed=done)

    return report


@dataclass
class Branch:
    """What the loader knows of a session's branch: its person, head, items so far and (when
    kept) their uids."""

    session: str
    person: str
    items: int = 0
    head: str = ""
    # (uid, id, seq) of the items added with keep_uids, oldest first
    uids: list[tuple[str, str, int]] = field(default_factory=list)
    # What every loaded turn names and was shown: a copy of a turn the service recorded on
    # this session (see `follow`), as its memory does not change while turns are loaded.
    template: dict[str, Any] = field(default_factory=lambda: dict(EMPTY_TEMPLATE))


EMPTY_TEMPLATE: dict[str, Any] = {
    "model": None, "shown": [], "saw": [], "shownAgent": [], "sawAgent": []
}


async def follow(db: Database, branch: Branch, turn: str, items: int, head: str) -> None:
    """After the service recorded `turn` (the branch's newest, `items` items in all), load
    the next turns as copies of it."""
    row = await db.read(lambda tx: tx.row("bench_turn_template", turn=turn))
    if row is None:
        raise RuntimeError(f"no turn {turn}")
    branch.template = {name: row[name] or EMPTY_TEMPLATE[name] for name in EMPTY_TEMPLATE}
    branch.items, branch.head = items, head


def turn_param(branch: Branch, texts: Sequence[str]) -> dict[str, Any]:
    """The `turn` parameter of record_turn as Turns.record builds it: completed, no model run
    (the loaded sessions have `generate` off), alternating user and assistant messages, with
    the branch's template for what it names and was shown."""
    items = []
    for n, text in enumerate(texts):
        role = "user" if (branch.items + n) % 2 == 0 else "assistant"
        items.append({
            "uid": new_id("itm"),
            "id": item_id(branch.items + n + 1),
            "type": "message",
            "role": role,
            "content": text,
            "app": None,
            "author": branch.person if role == "user" else role,
        })
    return {
        "id": new_id("trn"), "learn": False, "clientItemIds": False, "status": "completed",
        "at": now_ms(),
        "head": new_head(), **branch.template, "items": items,
    }


def message(n: int) -> str:
    return f"Message {n}: the budget for trip {n % 97} is {n % 1000} EUR, window seat please."


async def add_turns(
    db: Database,
    branch: Branch,
    items: int,
    per_turn: int,
    advance: Callable[[int], None],
    keep_uids: bool = False,
) -> None:
    """Grow the branch by `items` items in turns of `per_turn`, many turns per transaction."""
    left = items
    while left > 0:
        chunk = min(left, max(per_turn, ITEMS_PER_TX // per_turn * per_turn))
        turns: list[dict[str, Any]] = []
        for start in range(0, chunk, per_turn):
            size = min(per_turn, chunk - start)
            turn = turn_param(branch, [message(branch.items + k) for k in range(size)])
            if keep_uids:
                branch.uids.extend(
                    (item["uid"], item["id"], branch.items + n + 1)
                    for n, item in enumerate(turn["items"])
                )
            branch.items += size
            turns.append(turn)

        async def write(tx: Tx, turns: list[dict[str, Any]] = turns) -> None:
            for turn in turns:
                await tx.row("record_turn", id=branch.session, turn=turn, run=None)

        await db.write(write)
        branch.head = turns[-1]["head"]
        left -= chunk
        advance(chunk)


def batches(total: int, size: int) -> Iterator[range]:
    for start in range(0, total, size):
        yield range(start, min(start + size, total))


async def add_entries(
    db: Database, branch: Branch, entries: int, sources: int,
    advance: Callable[[int], None],
) -> None:
    """`entries` session entries, each citing `sources` of the branch's items (loaded with
    keep_uids), kept by consolidation runs of ENTRIES_PER_RUN entries, as a model would."""
    needed = entries * sources
    if len(branch.uids) < needed:
        raise ValueError(f"{needed} item uids are needed, the branch has {len(branch.uids)}")
    for chunk in batches(entries, ENTRIES_PER_RUN):
        read = branch.uids[chunk.start * sources : chunk.stop * sources]
        cited = [uid for uid, _, _ in read]

        async def write(
            tx: Tx, chunk: range = chunk, cited: list[str] = cited,
            read: list[tuple[str, str, int]] = read,
        ) -> None:
            run_id, at = new_id("run"), now_ms()
            queued = {"id": run_id, "model": "builtin", "turn": None, "trigger": "refresh",
                      "at": at}
            await tx.row("queue_run", id=branch.session, run=queued)
            await tx.row("claim_run", job=run_id, now=at, lease=15_000)
            kept = [
                {
                    "id": new_id("chg"), "op": "remember", "key": f"k{n}",
                    "content": f"Fact {n}: the traveller prefers hotel {n % 50} near gate {n}.",
                    "kind": "fact", "status": "active", "replaces": None,
                    "sources": cited[(n - chunk.start) * sources : (n - chunk.start + 1) * sources],
                }
                for n in chunk
            ]
            run = {"id": run_id, "head": new_head(), "at": now_ms()}
            # the items read join the processed ledger, in timeline order (kept state)
            await tx.row("apply_consolidation", id=branch.session, run=run, read=cited,
                         readIds=[item for _, item, _ in read], readSeq=read[-1][2],
                         kept=kept, dropped=[])

        await db.write(write)
        advance(len(chunk))


async def add_agent_entries(
    db: Database, org: str, agent: str, person: str, entries: int,
    advance: Callable[[int], None],
) -> None:
    """`entries` shared agent entries, written as a person's edits of the agent's memory."""
    for chunk in batches(entries, AGENT_ENTRIES_PER_VERSION):

        async def write(tx: Tx, chunk: range = chunk) -> None:
            memory = AgentMemoryRepository(tx)
            version = await memory.lock_agent(org, agent)
            changes = [
                AgentEdit(ChangeOp.REMEMBER, f"a{n}", "",
                          f"The team prefers tool {n} for task {n % 31}.",
                          Kind.PREFERENCE, Status.ACTIVE, None, Visibility.SHARED)
                for n in chunk
            ]
            await memory.apply(org, agent, version, MadeBy(Maker.PERSON, person=person), changes,
                               now_ms())

        await db.write(write)
        advance(len(chunk))
