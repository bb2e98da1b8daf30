"""S9, S10: every change a model proposes is checked before anything is written.

A change that breaks a rule is dropped with its reason; the others apply.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol, TypeVar

import pydantic
from pydantic import BaseModel, ConfigDict, field_validator

from app.domain.agents import AGENT_KINDS, SHARED, VISIBILITIES, AgentEdit, AgentEntry
from app.domain.enums import ChangeOp, Kind, Status, Visibility
from app.domain.erasures import erasures_own
from app.domain.items import Item, outside_data
from app.domain.jobs import Dropped, Kept
from app.domain.sessions import KINDS, Entry
from app.errors import ValidationError
from app.memory.changes.commands import (
    MAX_CONTENT_LENGTH,
    MAX_KEY_LENGTH,
    check_agent_key,
    check_content_characters,
    check_key,
)
from app.memory.changes.credentials import credential_reason

__all__ = [
    "Dropped",
    "Kept",
    "agent_changes",
    "check_agent_changes",
    "check_changes",
    "keep_newer_agent_edits",
    "keep_newer_edits",
    "session_changes",
]

class ProposedChange(BaseModel):
    """One change as the model proposes it; the checks decide whether it applies."""

    model_config = ConfigDict(extra="ignore")

    op: str
    key: str
    content: str | None = None
    kind: str | None = None
    sources: list[str] = []


class ProposedAgentChange(ProposedChange):
    """One agent memory change as the helper model proposes it (A5, A9: who it is about, and
    whether it is private to them)."""

    about: str | None = None
    visibility: str | None = None

    @field_validator("about")
    @classmethod
    def _trimmed(cls, about: str | None) -> str | None:
        """`about` is read as a person's command reads it: trimmed."""
        return None if about is None else about.strip()

    @property
    def asked_visibility(self) -> str:
        """The visibility the change asks for: shared when it names none, as a person's
        command; an empty one is no visibility."""
        return Visibility.SHARED if self.visibility is None else self.visibility


ProposedT = TypeVar("ProposedT", bound=ProposedChange)
KeptT = TypeVar("KeptT", bound="Checked")


class Checked(Protocol):
    """What the checks read of a kept change of either kind."""

    @property
    def op(self) -> str: ...
    @property
    def key(self) -> str: ...
    @property
    def content(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def sources(self) -> tuple[str, ...]: ...


WITHHELD = "[withheld: holds a credential]"


def _withhold(raw: Any) -> Any:
    """`raw` with every string that holds a credential replaced (S10: the record keeps none)."""
    if isinstance(raw, str):
        return WITHHELD if credential_reason(raw) is not None else raw
    if isinstance(raw, dict):
        return {_withhold(k) if isinstance(k, str) else k: _withhold(v) for k, v in raw.items()}
    if isinstance(raw, list | tuple):
        return [_withhold(v) for v in raw]
    return raw


def _safe(text: str) -> str:
    """A string the model sent, as a record keeps it: never a credential, and a lone surrogate
    (half of a character, which JSON can escape and no store can encode) as its escape."""
    return WITHHELD if credential_reason(text) is not None else _storable(text)


def _storable(text: str) -> str:
    """`text` with each lone surrogate written as its escape, so a store can encode it."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _shown(value: Any) -> str:
    """A value the model sent, as a reason may quote it: never a credential."""
    return repr(_safe(str(value))[:80])


def _drop(op: Any, key: Any, reason: str, raw: Any) -> Dropped:
    """The record of a dropped change; nothing the model sent is kept if it holds a credential.
    It names the person the change says it is about, so their erasure finds it."""
    return Dropped(
        _safe(op if isinstance(op, str) else "")[:MAX_KEY_LENGTH],
        _safe(key if isinstance(key, str) else "")[:MAX_KEY_LENGTH],
        reason,
        _proposal_text(raw),
        about=dropped_about(raw),
    )


def dropped_about(raw: Any) -> str | None:
    """Whom a dropped change says it is about, as its record keeps it: trimmed, at most a key's
    length, never a credential; None when it names no one."""
    about = raw.get("about") if isinstance(raw, dict) else None
    return _safe(about.strip())[:MAX_KEY_LENGTH] if isinstance(about, str) else None


def _proposal_text(raw: Any) -> str:
    try:
        text = json.dumps(_withhold(raw), ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        text = repr(raw)
        text = WITHHELD if credential_reason(text) is not None else text
    return _storable(text[:2000])


def _problem(
    change: ProposedChange,
    current: Entry | None,
    readable: Collection[str],
    processed: Collection[str],
    allowed_kinds: Collection[str],
) -> str | None:
    """Why `change` must not apply, or None when it may."""
    if change.op not in (ChangeOp.REMEMBER, ChangeOp.FORGET):
        return f"unknown op {_shown(change.op)}"
    try:
        check_key(change.key)
    except ValidationError as exc:
        return f"bad key: {exc.message}"
    if not change.sources:
        return "cites no source"
    for source in change.sources:
        if source in processed:
            return f"cites an item already processed: {_shown(source)}"
        if source not in readable:
            return f"cites an item that is not among the unprocessed items: {_shown(source)}"
    if change.op == ChangeOp.FORGET:
        if current is None:
            return "forgets a key that memory does not hold"
        if current.status == Status.RETRACTED:
            return "forgets an entry that is already retracted"
        return None
    if current is not None and current.status == Status.RETRACTED:
        return "revives a retracted entry (only a person's Remember can)"
    if erasures_own(change.key):
        return "names a key an erasure gave"
    reason = credential_reason(change.key)
    if reason is not None:
        return f"holds a credential in its key ({reason})"
    if change.kind not in allowed_kinds:
        return f"unknown kind {_shown(change.kind)}"
    try:
        content = check_content_characters(change.content or "", "content").strip()
    except ValidationError as exc:
        return f"bad content: {exc.message}"
    if not content or len(content) > MAX_CONTENT_LENGTH:
        return "content is empty or too long"
    reason = credential_reason(content)
    if reason is not None:
        return f"holds a credential ({reason})"
    return None


def check_all(
    proposed: Sequence[Any],
    model: type[ProposedT],
    rule: Callable[[ProposedT, str], KeptT | str],
) -> tuple[list[KeptT], list[Dropped]]:
    """The one check loop (S9): each proposal is parsed as `model`, a second change of a key is
    dropped, and the kind's `rule` answers the kept change or why it is dropped."""
    kept: list[KeptT] = []
    dropped: list[Dropped] = []
    claimed: set[str] = set()
    for raw in proposed:
        try:
            change = model.model_validate(raw)
        except pydantic.ValidationError:
            fields = raw if isinstance(raw, dict) else {}
            dropped.append(_drop(fields.get("op"), fields.get("key"), "malformed change", raw))
            continue
        key = change.key.strip()
        if key in claimed:
            dropped.append(_drop(change.op, key, "a second change for the same key", raw))
            continue
        claimed.add(key)
        judged = rule(change, key)
        if isinstance(judged, str):
            dropped.append(_drop(change.op, key, judged, raw))
        else:
            kept.append(judged)
    return kept, dropped


def keep_newer(
    kept: Sequence[KeptT], overtaken: Callable[[KeptT], bool]
) -> tuple[list[KeptT], list[Dropped]]:
    """S7: an edit made while the model worked is kept. A change whose entry changed since the
    model read the memory (`overtaken`) is dropped, not applied."""
    still: list[KeptT] = []
    dropped: list[Dropped] = []
    for change in kept:
        if overtaken(change):
            dropped.append(
                Dropped(
                    change.op,
                    change.key,
                    "the entry changed while the model worked: the newer edit is kept",
                    _proposal_text({"op": change.op, "key": change.key, "content": change.content,
                                    "kind": change.kind, "sources": list(change.sources)}),
                )
            )
        else:
            still.append(change)
    return still, dropped


def check_changes(
    proposed: Sequence[Any],
    current: Mapping[str, Entry],
    readable: Collection[str],
    processed: Collection[str],
    allowed_kinds: Collection[str] = KINDS,
) -> tuple[list[Kept], list[Dropped]]:
    """Split a model's proposed changes into those that apply and those dropped, with reasons.

    `readable` are the ids of the unprocessed items this consolidation read; `processed` the
    ids of the branch's items that an earlier consolidation read.
    """

    def rule(change: ProposedChange, key: str) -> Kept | str:
        entry = current.get(key)
        problem = _problem(change, entry, readable, processed, allowed_kinds)
        if problem is not None:
            return problem
        sources = tuple(dict.fromkeys(change.sources))
        if change.op == ChangeOp.FORGET:
            assert entry is not None
            return Kept(ChangeOp.FORGET, key, entry.content, entry.kind, Status.RETRACTED, sources,
                        entry.change)
        return Kept(ChangeOp.REMEMBER, key, (change.content or "").strip(), Kind(str(change.kind)),
                    Status.ACTIVE, sources, entry.change if entry else None)

    return check_all(proposed, ProposedChange, rule)


def keep_newer_edits(
    kept: Sequence[Kept], seen: Mapping[str, str], current: Mapping[str, Entry]
) -> tuple[list[Kept], list[Dropped]]:
    """S7: a change to a key whose entry changed since the model read the memory (`seen`:
    key -> change id then) is dropped: the newer edit is kept."""

    def overtaken(change: Kept) -> bool:
        entry = current.get(change.key)
        return (entry.change if entry is not None else None) != seen.get(change.key)

    return keep_newer(kept, overtaken)


def _agent_problem(
    change: ProposedAgentChange,
    person: str | None,
    members: Collection[str],
    readable: Mapping[str, Item],
) -> str | None:
    """What A4, A5 and A9 say against a learned change, before the checks all changes share."""
    try:
        check_agent_key(change.key)
    except ValidationError as exc:
        return f"bad key: {exc.message}"
    visibility = change.asked_visibility
    if visibility not in VISIBILITIES:
        return f"unknown visibility {_shown(visibility)}"
    if change.about is not None and change.about not in members:
        return "about names no person of the org"
    if visibility == Visibility.PRIVATE and change.about is None:
        return "a private change names the person it is about"
    if change.about is not None and change.about != person:
        return "a change about a person is made only from that person's own session"
    cited = [readable[s] for s in change.sources if s in readable]
    if len(cited) == len(change.sources) and outside_data(cited):
        return "only tool results from Apps support it (outside data, A4)"
    return None


def check_agent_changes(
    proposed: Sequence[Any],
    current: Sequence[AgentEntry],
    readable: Mapping[str, Item],
    person: str | None,
    members: Collection[str],
) -> tuple[list[AgentEdit], list[Dropped]]:
    """Split the helper model's proposed agent changes into those that apply and those dropped.

    `current` are the agent entries the session's person may see; `readable` the session's
    items not yet learned from, by id; `person` the session's person; `members` the org's.
    Every rule of `check_changes` holds (sources, one change per key, no revival, no
    credentials) with the lasting kinds only (A1), plus A4, A5 and A9.
    """
    entries = {(e.key, e.owner): e for e in current}

    def rule(change: ProposedAgentChange, key: str) -> AgentEdit | str:
        problem = _agent_problem(change, person, members, readable)
        visibility = change.asked_visibility
        owner = change.about if visibility == Visibility.PRIVATE and change.about else SHARED
        entry = entries.get((key, owner))
        if problem is None:
            problem = _problem(
                change, entry.as_entry() if entry else None, readable, (), AGENT_KINDS
            )
        if problem is not None:
            return problem
        sources = tuple(dict.fromkeys(change.sources))
        if change.op == ChangeOp.FORGET:
            assert entry is not None
            return AgentEdit(ChangeOp.FORGET, key, owner, entry.content, entry.kind,
                             Status.RETRACTED, entry.about, entry.visibility, sources,
                             entry.change)
        return AgentEdit(ChangeOp.REMEMBER, key, owner, (change.content or "").strip(),
                         Kind(str(change.kind)), Status.ACTIVE, change.about,
                         Visibility(visibility), sources, entry.change if entry else None)

    return check_all(proposed, ProposedAgentChange, rule)


def keep_newer_agent_edits(
    kept: Sequence[AgentEdit], current: Sequence[AgentEntry]
) -> tuple[list[AgentEdit], list[Dropped]]:
    """S7 for agents: a change to an entry that changed while the model worked (a person's
    edit) is dropped: the newer edit is kept."""
    now = {(e.key, e.owner): e.change for e in current}
    still, dropped = keep_newer(
        kept, lambda change: now.get((change.key, change.owner)) != change.replaces
    )
    about = {change.key: change.about for change in kept}  # (one change per key)
    return still, [replace(d, about=about[d.key]) for d in dropped]


def named_persons(proposed: Sequence[Any]) -> set[str]:
    """The persons a model's proposed agent changes say they are `about`, read as the checks
    read them (trimmed)."""
    return {
        about.strip() for change in proposed
        if isinstance(change, dict) and isinstance(about := change.get("about"), str)
    }


ERASED_SINCE = "the run read content erased before its changes were applied"
ERASED_WITHHELD = "[withheld: erased]"
K = TypeVar("K", bound=Checked)


def withhold_erased(
    kept: Sequence[K], dropped: Sequence[Dropped], erased: bool
) -> tuple[list[K], list[Dropped]]:
    """A run or learning job whose model read content that was erased before its changes were
    applied (`erased`: an item it read is a tombstone, an entry it was shown was erased, or a
    person its changes are about was erased) applies none of them: the model saw the erased
    content, and any change may carry it. Each is dropped with that reason, and the record
    keeps nothing the model sent (no key, no proposal, no person it is about, no reason that
    may quote it) of those or of the changes other rules dropped."""
    if not erased:
        return list(kept), list(dropped)
    return [], [
        *(Dropped(k.op, ERASED_WITHHELD, ERASED_SINCE, "") for k in kept),
        *(Dropped(d.op, ERASED_WITHHELD, ERASED_SINCE, "", d.session) for d in dropped),
    ]


def session_changes(
    proposed: Sequence[Any],
    current: Mapping[str, Entry],
    readable: Collection[str],
    processed: Collection[str],
    seen: Mapping[str, str],
    erased: bool,
) -> tuple[list[Kept], list[Dropped]]:
    """A consolidation's decision on what its model proposed: the changes that pass the checks
    (S9, S10), less those whose entry changed since the model read the memory (`seen`, S7),
    and none where it read content erased meanwhile; the rest dropped, each with its reason."""
    kept, dropped = check_changes(proposed, current, readable, processed)
    kept, overtaken = keep_newer_edits(kept, seen, current)
    return withhold_erased(kept, [*dropped, *overtaken], erased)


def agent_changes(
    proposed: Sequence[Any],
    seen: Sequence[AgentEntry],
    current: Sequence[AgentEntry],
    readable: Mapping[str, Item],
    person: str | None,
    members: Collection[str],
    erased: bool,
) -> tuple[list[AgentEdit], list[Dropped]]:
    """A learning job's decision on what the helper model proposed from one session: the
    changes that pass the checks (`seen`: the entries the model was shown), less those whose
    entry changed since (`current`: the entries now), and none where it read content erased
    meanwhile; the rest dropped, each with its reason."""
    kept, dropped = check_agent_changes(proposed, seen, readable, person, members)
    kept, overtaken = keep_newer_agent_edits(kept, current)
    return withhold_erased(kept, [*dropped, *overtaken], erased)
