"""How a turn is decided (S5-S8, A2, A8, A9): what its instructions are shown of what they can
reach, the ids its items take, its model, and whether it queues a run and teaches its agent.
Pure rules over what the session's lock read (`TurnState`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.domain.enums import TurnStatus
from app.domain.model_names import resolve_model
from app.domain.principals import Principal
from app.domain.turns import NewItem, NewRun, NewTurn, Reachable, Turn, TurnItem, TurnState
from app.memory.agents.entries import view_of
from app.memory.ids import new_head, new_id, now_ms
from app.memory.jobs.learning import teaches
from app.memory.turns.instructions import Instructions, compose


def shown(reach: Reachable, max_length: int) -> tuple[Instructions, list[str], list[str]]:
    """S5, S6, A8: the memory text a turn gets now, and the change each session key and each
    agent key shown stands for, in the order shown. Session memory follows the session's
    `use`; agent memory goes into every turn (the org's `agentMemory` stops learning alone,
    A2), as the session's person may see it (A9): a session always has a person; were one
    without, it would see shared entries only."""
    session = reach.session if reach.use else ()
    agent = list(view_of(Principal(reach.org, person=reach.viewer), reach.agent).values())
    text = compose(session, [e.as_entry() for e in agent], max_length, reach.shared_agent)
    saw = {e.key: e.change for e in session}
    saw_agent = {e.name: e.change for e in agent}
    return text, [saw[k] for k in text.keys], [saw_agent[k] for k in text.agent_keys]


def needs_consolidation(items: Sequence[TurnItem]) -> bool:
    """S8: a turn that only runs an App action (its action, a person's approval of it, and the
    App's results) ran no model, so it teaches nothing."""
    return any(
        not (item.type in ("app_action", "approval") or (item.type == "tool_result" and item.app))
        for item in items
    )


@dataclass(frozen=True)
class Plan:
    """A turn decided from its session's state and reach: what is recorded (`turn`), the
    consolidation run it queues, and whether it teaches the agent."""

    turn: NewTurn
    run: NewRun | None
    learn: bool

    @property
    def learns(self) -> bool:
        """Whether recording it queues learning: where it teaches the agent and queues no run
        (with no run queued, the agent's queue of runs may be empty now, A2)."""
        return self.run is None and self.learn

    @property
    def run_id(self) -> str | None:
        return None if self.run is None else self.run.id


def plan(
    state: TurnState,
    items: Sequence[TurnItem],
    generated: Sequence[str],
    model: str | None,
    status: TurnStatus,
    max_length: int,
    turn_id: str | None = None,
    earlier: Turn | None = None,
) -> Plan:
    """Decide a turn from its session's state and reach: its items' ids (a client's own, else
    the one `generated` for its place), its model, what it is shown, and whether it queues a run
    and teaches the agent. A completing step (`earlier`: the turn it continues) is shown
    nothing more: what a turn was shown is fixed when it starts."""
    session = state.session
    client_ids = [item.id for item in items if item.id is not None]
    ids = [item.id or generated[n] for n, item in enumerate(items)]
    # S8 over the whole turn, its earlier step included
    before = () if earlier is None else earlier.types
    apps = () if earlier is None else earlier.apps
    model_ran = needs_consolidation(
        [*items, *(TurnItem(t, "assistant", "", app=a) for t, a in zip(before, apps, strict=True))]
    )
    text, saw, saw_agent = (
        shown(state.reach, max_length) if earlier is None else (Instructions("", ()), [], [])
    )
    run_model = resolve_model(
        (earlier.model if earlier is not None else None) or model, session.model,
        session.agent_model, session.org.model,
    )
    generate = session.switches.generate
    queued = status == TurnStatus.COMPLETED and generate and run_model is not None and model_ran
    learn = status == TurnStatus.COMPLETED and teaches(
        session.kind, generate, session.org.agent_memory, only_app_actions=not model_ran
    )
    at = now_ms()
    turn = NewTurn(
        id=turn_id or new_id("trn"),
        learn=learn,
        client_item_ids=bool(client_ids),
        status=status,
        model=run_model,
        at=at,
        head=new_head(),
        shown=text.keys,
        saw=tuple(saw),
        shown_agent=text.agent_keys,
        saw_agent=tuple(saw_agent),
        items=tuple(
            NewItem(
                uid=new_id("itm"), id=ids[n], type=item.type, role=item.role,
                content=item.content, app=item.app,
                author=session.person if item.role == "user" else item.role,
            )
            for n, item in enumerate(items)
        ),
    )
    run = NewRun(new_id("run"), run_model, at) if queued else None
    return Plan(turn, run, learn)

