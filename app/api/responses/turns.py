"""What REST answers of turns: a turn with its session, and the instructions a turn is given."""

from __future__ import annotations

from typing import Annotated, NotRequired

from typing_extensions import TypedDict

from app.api.responses.words import words
from app.domain.enums import JobStatus, TurnStatus
from app.domain.turns import Turn as TurnValue
from app.memory.turns import instructions


class Turn(TypedDict):
    id: str
    status: Annotated[str, words(TurnStatus)]
    model: str | None
    items: list[str]
    shown: list[str]
    shownAgent: list[str]
    at: int
    completedAt: int | None


class TurnSession(TypedDict):
    """The session a turn was recorded in, at the revision and head after it."""

    id: str
    head: str
    revision: int


class RunRef(TypedDict):
    id: str
    status: Annotated[str, words(JobStatus)]


class TurnView(TypedDict):
    """A turn and its session; with `?wait`, the consolidation run it queued."""

    turn: Turn
    session: TurnSession
    run: NotRequired[RunRef]


def turn_view_json(turn: TurnValue) -> TurnView:
    return {
        "turn": {
            "id": turn.id,
            "status": turn.status,
            "model": turn.model,
            "items": list(turn.items),
            "shown": list(turn.shown),
            "shownAgent": list(turn.shown_agent),
            "at": turn.at,
            "completedAt": turn.completed_at,
        },
        "session": {"id": turn.session, "head": turn.head, "revision": turn.revision},
    }


class IncludedKeys(TypedDict):
    session: list[str]
    agent: list[str]


class Instructions(TypedDict):
    """The memory text a turn would be given now, and the keys it includes."""

    memory: str
    included: IncludedKeys


def instructions_json(shown: instructions.Instructions) -> Instructions:
    return {
        "memory": shown.text,
        "included": {"session": list(shown.keys), "agent": list(shown.agent_keys)},
    }
