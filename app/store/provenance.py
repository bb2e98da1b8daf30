"""The provenance repository: an entry's story, what cites an item, what a turn was shown."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.domain.principals import Principal
from app.domain.provenance import Pair, StoryStep
from app.store.database import Tx
from app.store.records import citing, story_step


def pair_of(row: Mapping[str, Any]) -> Pair:
    """The session and agent entry changes of a row (`sessionEntries`, `agentEntries`)."""
    return ([citing(r) for r in row["sessionEntries"]],
            [citing(r) for r in row["agentEntries"]])


class ProvenanceRepository:
    """Where a session's facts came from, in one transaction, in the caller's scope."""

    def __init__(self, tx: Tx) -> None:
        self.tx = tx

    async def stories(
        self, who: Principal, change_ids: Sequence[str]
    ) -> dict[str, list[StoryStep]]:
        """Each entry's story (by the change of its current state), newest first."""
        rows = await self.tx.rows("entry_story", **who.scope(), ids=list(change_ids))
        return {row["cid"]: [story_step(s) for s in row["story"]] for row in rows}

    async def supports(self, who: Principal, uids: Sequence[str]) -> dict[str, Pair]:
        """For each item (by uid), every session and agent entry change that cites it."""
        rows = await self.tx.rows("item_supports", **who.scope(), uids=list(uids))
        return {row["uid"]: pair_of(row) for row in rows}

    async def shown(self, who: Principal, turn_ids: Sequence[str]) -> dict[str, Pair]:
        """For each turn, the session and agent entries it was given, as they then stood."""
        rows = await self.tx.rows("turn_shown", **who.scope(), ids=list(turn_ids))
        return {row["tid"]: pair_of(row) for row in rows}
