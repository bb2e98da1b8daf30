"""S9, S10, A1, A4, A5, A6, A9: every agent memory change the helper model proposes is checked
by pure functions before it is applied; a change that breaks a rule is dropped with its reason,
the others apply. The built-in offline model answers learning requests with changes that pass.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.domain.agents import AGENT_KINDS, SHARED, AgentEntry
from app.domain.agents import AgentEdit as AgentKept
from app.domain.enums import ChangeOp, Kind, Status, Visibility
from app.domain.items import Item
from app.domain.jobs import SessionInput, with_unique_ids
from app.memory.changes.checks import (
    Dropped,
    ProposedAgentChange,
    check_agent_changes,
    keep_newer_agent_edits,
)
from app.memory.changes.credentials import credential_reason
from app.memory.jobs.prompts import agent_memory_changes_schema
from app.models.base import LEARNING_SCHEMA, ContextItem, ModelRequest
from app.models.builtin import BuiltinModel

PERSON = "ana"
MEMBERS = frozenset({"ana", "ben"})


def item(id: str, type: str, role: str | None, content: str, app: str | None = None) -> Item:
    return Item(
        uid=f"u-{id}", id=id, type=type, role=role, content=content, app=app,
        author=PERSON if role == "user" else None, at=1, seq=int(id[2:]),
    )


USER = "i-01"  # ana's own words
ASSISTANT = "i-02"
APP_A = "i-03"  # tool results from Apps: outside data (A4)
APP_B = "i-04"
TOOL = "i-05"  # a tool result that is not from an App
READABLE = {
    i.id: i
    for i in [
        item(USER, "message", "user", "I prefer window seats. Always book refundable fares."),
        item(ASSISTANT, "message", "assistant", "Noted: window seats, refundable fares."),
        item(APP_A, "tool_result", "tool", "Flight LH 123 has a window seat free.", app="flights"),
        item(APP_B, "tool_result", "tool", "Refundable fares cost 20% more.", app="fares"),
        item(TOOL, "tool_result", "tool", "Today is a Tuesday."),
    ]
}
APP_ITEMS = [APP_A, APP_B]


def agent_entry(
    key: str, owner: str = SHARED, status: str = "active", kind: str = "preference"
) -> AgentEntry:
    return AgentEntry(
        key=key,
        owner=owner,
        content=f"About {key}.",
        kind=Kind(kind),
        status=Status(status),
        about=owner or None,
        visibility=Visibility.PRIVATE if owner else Visibility.SHARED,
        updated_at=1,
        change=f"chg-{key}-{owner or 'shared'}",
    )


# What ana's session may see: shared entries and ana's private ones (A9).
CURRENT = [
    agent_entry("seat"),  # shared, active
    agent_entry("hotel", status="retracted", kind="decision"),  # shared, retracted (A6)
    agent_entry("meal"),  # shared and ana's private one under one key
    agent_entry("meal", owner="ana"),
    agent_entry("lounge", owner="ana", status="retracted"),  # ana's, retracted (A6)
]
BY_IDENTITY = {(e.key, e.owner): e for e in CURRENT}

PASSWORD = "the password is Xk9!mP2qLz"
API_KEY = "sk-" + "Zx8Yw7Vu6T" * 4
URL = "https://user:pass@host/"
SECRETS = [PASSWORD, API_KEY, URL]
# What a dropped record must never hold, for each planted credential.
SECRET_PARTS = {PASSWORD: "Xk9!mP2qLz", API_KEY: API_KEY, URL: "user:pass"}


def remember(
    key: str,
    content: str = "Ana prefers window seats.",
    kind: str | None = "preference",
    sources: list[str] | None = None,
    about: str | None = None,
    visibility: str | None = None,
) -> dict[str, Any]:
    return {
        "op": "remember", "key": key, "content": content, "kind": kind,
        "sources": [USER] if sources is None else sources, "about": about,
        "visibility": visibility,
    }


def check(*proposed: Any, person: str | None = PERSON) -> tuple[list[AgentKept], list[Dropped]]:
    return check_agent_changes(list(proposed), CURRENT, READABLE, person, MEMBERS)


def only_kept(proposed: Any, person: str | None = PERSON) -> AgentKept:
    kept, dropped = check(proposed, person=person)
    assert dropped == []
    assert len(kept) == 1
    return kept[0]


def only_dropped(proposed: Any, person: str | None = PERSON) -> Dropped:
    kept, dropped = check(proposed, person=person)
    assert kept == []
    assert len(dropped) == 1
    return dropped[0]


def test_the_secrets_used_here_are_credentials() -> None:
    # S10: the planted values are ones the detectors find
    for secret in SECRETS:
        assert credential_reason(secret) is not None, secret
        assert credential_reason(f"Ana said: {secret} ok") is not None, secret


# ---- examples ---------------------------------------------------------------------------------


def test_a_private_preference_about_the_person_is_kept_as_theirs() -> None:
    # A5, A9: what a person said about themselves is private to them
    kept = only_kept(remember("aisle", about="ana", visibility="private"))
    assert kept == AgentKept(
        ChangeOp.REMEMBER, "aisle", "ana", "Ana prefers window seats.", Kind.PREFERENCE,
        Status.ACTIVE, "ana", Visibility.PRIVATE, (USER,), None,
    )


def test_a_shared_change_is_owned_by_nobody() -> None:
    # A9: shared work has the owner SHARED
    kept = only_kept(remember("refunds", kind="procedure", visibility="shared"))
    assert (kept.owner, kept.visibility, kept.about) == (SHARED, "shared", None)
    kept = only_kept(remember("refunds", kind="procedure"))  # shared is the default
    assert (kept.owner, kept.visibility) == (SHARED, "shared")
    kept = only_kept(remember("refunds", kind="decision", about="ana", visibility="shared"))
    assert (kept.owner, kept.about) == (SHARED, "ana")  # A5: it may say who said it


def test_replaces_names_the_current_entry_of_the_same_key_and_owner() -> None:
    # S9, A9: the identity of an entry is (key, owner)
    assert only_kept(remember("meal")).replaces == "chg-meal-shared"
    assert only_kept(remember("meal", about="ana", visibility="private")).replaces == "chg-meal-ana"
    assert only_kept(remember("seat")).replaces == "chg-seat-shared"
    # ana's private seat does not exist yet: a new entry
    assert only_kept(remember("seat", about="ana", visibility="private")).replaces is None
    assert only_kept(remember("new-key")).replaces is None


def test_a_forget_retracts_the_entry_of_its_owner() -> None:
    # S9, A9
    kept = only_kept({"op": "forget", "key": "meal", "sources": [USER], "about": "ana",
                      "visibility": "private"})
    assert (kept.op, kept.owner, kept.status, kept.replaces) == (
        "forget", "ana", "retracted", "chg-meal-ana")
    kept = only_kept({"op": "forget", "key": "meal", "sources": [USER]})
    assert (kept.owner, kept.replaces) == (SHARED, "chg-meal-shared")


def test_only_lasting_kinds_are_kept() -> None:
    # A1: procedure, preference, decision; facts for one task stay in session memory
    for kind in AGENT_KINDS:
        assert only_kept(remember("k", kind=kind)).kind == kind
    for other in ["fact", "hypothesis", "rumour", None]:
        assert "unknown kind" in only_dropped(remember("k", kind=other)).reason


def test_a_retracted_entry_is_not_revived() -> None:
    # A6: only a person's Remember brings it back
    assert "retracted" in only_dropped(remember("hotel", kind="decision")).reason
    dropped = only_dropped(remember("lounge", about="ana", visibility="private"))
    assert "retracted" in dropped.reason
    # forgetting a retracted one changes nothing either
    assert "retracted" in only_dropped({"op": "forget", "key": "hotel", "sources": [USER]}).reason


def test_a_change_supported_only_by_app_results_is_dropped() -> None:
    # A4: tool results from Apps are outside data
    for sources in [[APP_A], [APP_B], APP_ITEMS, [APP_A, APP_A]]:
        dropped = only_dropped(remember("k", sources=sources))
        assert "App" in dropped.reason
        assert "tool results" in dropped.reason


def test_a_change_supported_by_the_users_words_too_is_kept() -> None:
    # A4: kept when a user's own words support it too
    assert only_kept(remember("k", sources=[APP_A, USER])).sources == (APP_A, USER)
    assert only_kept(remember("k", sources=[USER, *APP_ITEMS])).sources == (USER, *APP_ITEMS)


def test_about_must_be_a_member() -> None:
    # A5: about names a person of the org
    dropped = only_dropped(remember("k", about="zoe", visibility="private"))
    assert "no person of the org" in dropped.reason
    assert "no person of the org" in only_dropped(remember("k", about="zoe")).reason


def test_a_private_change_names_who_it_is_about() -> None:
    # A9
    assert "private" in only_dropped(remember("k", visibility="private")).reason


def test_a_change_about_another_member_is_dropped() -> None:
    # A9: a change about person P is made only from P's own session
    for visibility in ["private", "shared", None]:
        dropped = only_dropped(remember("k", about="ben", visibility=visibility))
        assert "own session" in dropped.reason
    # a session with no person can make no change about anyone
    dropped = only_dropped(remember("k", about="ana", visibility="private"), person=None)
    assert "own session" in dropped.reason
    assert only_kept(remember("k"), person=None).owner == SHARED


def test_an_agent_key_with_an_at_sign_is_dropped() -> None:
    # A9: a service token lists private entries as key@person, so no key looks like one
    dropped = only_dropped(remember("seat@ben"))
    assert "bad key" in dropped.reason
    assert "@" in dropped.reason


def test_an_unknown_visibility_is_dropped() -> None:
    assert "visibility" in only_dropped(remember("k", visibility="public")).reason


def test_a_models_visibility_and_about_are_read_as_a_persons_command_reads_them() -> None:
    # A9: an empty visibility is none of the two, as a person's Remember refuses it; no
    # visibility at all is shared, as for a person
    assert "visibility" in only_dropped(remember("k", visibility="")).reason
    assert only_kept(remember("k")).visibility == Visibility.SHARED
    # A5: `about` is trimmed, as a person's is: the person, not "no person of the org"
    kept = only_kept(remember("aisle", about=" ana ", visibility="private"))
    assert (kept.about, kept.owner) == ("ana", "ana")


def test_sources_must_be_readable_items() -> None:
    # S9: it cites at least one item not yet learned from, and only those
    assert "no source" in only_dropped(remember("k", sources=[])).reason
    dropped = only_dropped(remember("k", sources=[USER, "i-99"]))
    assert "i-99" in dropped.reason


def test_the_first_change_for_a_key_wins() -> None:
    # S9: one change per key
    kept, dropped = check(
        remember("seat", "Ana prefers window seats."),
        remember("seat", "Ana prefers aisle seats."),
        remember("seat", "Ana prefers middle seats.", about="ana", visibility="private"),
    )
    assert [k.content for k in kept] == ["Ana prefers window seats."]
    assert [d.reason for d in dropped] == ["a second change for the same key"] * 2
    assert "aisle" in dropped[0].proposal


@pytest.mark.parametrize("secret", SECRETS)
def test_a_credential_in_content_or_key_is_dropped(secret: str) -> None:
    # S10: never stored, the drop recorded without the secret
    for proposal in [remember("k", f"Ana said {secret}"), remember(f"k {secret}")]:
        dropped = only_dropped(proposal)
        assert "credential" in dropped.reason or "bad key" in dropped.reason
        assert SECRET_PARTS[secret] not in dropped.key
        assert SECRET_PARTS[secret] not in dropped.proposal


# ---- properties of check_agent_changes --------------------------------------------------------

ids = st.sampled_from([USER, ASSISTANT, APP_A, APP_B, TOOL, "i-99"])
keys = st.sampled_from(["seat", "hotel", "meal", "lounge", "new", " seat ", "", "a@b", *SECRETS])
contents = st.sampled_from(["Ana prefers window seats.", "Book refundable fares.", "", "  ",
                            *(f"Note: {s}" for s in SECRETS)])
abouts = st.sampled_from([None, "ana", "ben", "zoe", *SECRETS])
well_typed = st.fixed_dictionaries(
    {
        "op": st.sampled_from(["remember", "remember", "forget", "merge"]),
        "key": keys,
        "sources": st.lists(ids, max_size=3),
    },
    optional={
        "content": st.one_of(st.none(), contents),
        "kind": st.one_of(st.none(), st.sampled_from([*AGENT_KINDS, "fact", "rumour"])),
        "about": abouts,
        "visibility": st.sampled_from([None, "shared", "private", "public"]),
    },
)
malformed = st.one_of(
    st.none(),
    st.integers(),
    st.text(max_size=5),
    st.fixed_dictionaries({"op": st.just("remember"), "key": keys, "sources": st.just(USER)}),
    st.fixed_dictionaries({"op": st.just("remember"), "key": st.integers()}),
    st.fixed_dictionaries({"key": keys, "content": contents}),
)
# Mostly valid changes, so that what is kept is exercised too.
nearly_valid = st.fixed_dictionaries(
    {
        "op": st.sampled_from(["remember", "remember", "forget"]),
        "key": st.sampled_from(["seat", "hotel", "meal", "lounge", "new", " new ", "other"]),
        "content": st.sampled_from(["Ana prefers window seats.", " Book refundable fares. "]),
        "kind": st.sampled_from(AGENT_KINDS),
        "sources": st.lists(ids, min_size=1, max_size=3).map(lambda s: [USER, *s]),
        "target": st.sampled_from([(None, None), (None, "shared"), ("ana", "shared"),
                                   ("ana", "private"), ("ana", "private"), ("ben", "private"),
                                   (None, "private")]),
    },
).map(lambda c: {**{k: v for k, v in c.items() if k != "target"},
                 "about": c["target"][0], "visibility": c["target"][1]})
proposals = st.lists(
    st.one_of(nearly_valid, nearly_valid, well_typed, well_typed, malformed), max_size=10
)
people = st.sampled_from([PERSON, "ben", None])


def well_formed(raw: Any) -> ProposedAgentChange | None:
    try:
        return ProposedAgentChange.model_validate(raw)
    except Exception:
        return None


@settings(deadline=None)  # the first credential check loads detect-secrets' plugins
@given(proposals, people)
def test_every_proposal_is_kept_or_dropped_once_and_nothing_else(
    proposed: list[Any], person: str | None
) -> None:
    # S9: a change that breaks a rule is dropped and recorded, the rest apply
    kept, dropped = check_agent_changes(proposed, CURRENT, READABLE, person, MEMBERS)
    assert len(kept) + len(dropped) == len(proposed)
    # Proposals are judged in order: each prefix's answer is a prefix of the whole answer, and
    # each proposal adds exactly one record, kept or dropped.
    before_kept: list[AgentKept] = []
    before_dropped: list[Dropped] = []
    for n in range(1, len(proposed) + 1):
        k, ds = check_agent_changes(proposed[:n], CURRENT, READABLE, person, MEMBERS)
        assert k[: len(before_kept)] == before_kept
        assert ds[: len(before_dropped)] == before_dropped
        assert (len(k) - len(before_kept), len(ds) - len(before_dropped)) in {(1, 0), (0, 1)}
        raw = proposed[n - 1]
        if len(k) > len(before_kept):
            assert isinstance(raw, dict)
            assert (k[-1].op, k[-1].key) == (raw["op"], raw["key"].strip())
        elif isinstance(raw, dict) and isinstance(raw.get("op"), str):
            assert ds[-1].op == raw["op"]
        before_kept, before_dropped = k, ds
    assert (before_kept, before_dropped) == (kept, dropped)
    for d in dropped:
        assert d.reason


@settings(deadline=None)
@given(proposals, people)
def test_the_first_proposal_for_a_key_wins(proposed: list[Any], person: str | None) -> None:
    # S9: at most one change per key
    kept, dropped = check_agent_changes(proposed, CURRENT, READABLE, person, MEMBERS)
    assert len({k.key for k in kept}) == len(kept)
    claimed: set[str] = set()
    seconds = 0
    for raw in proposed:
        change = well_formed(raw)
        if change is None:
            continue
        key = change.key.strip()
        if key in claimed:
            seconds += 1
        claimed.add(key)
    assert [d.reason for d in dropped].count("a second change for the same key") == seconds
    firsts: dict[str, Any] = {}
    for raw in proposed:
        change = well_formed(raw)
        if change is not None:
            firsts.setdefault(change.key.strip(), raw)
    for k in kept:  # the kept change of a key is its first proposal
        assert firsts[k.key]["op"] == k.op


@settings(deadline=None)
@given(proposals, people)
def test_what_is_kept_obeys_every_rule(proposed: list[Any], person: str | None) -> None:
    # S9, S10, A1, A4, A5, A6, A9
    kept, _ = check_agent_changes(proposed, CURRENT, READABLE, person, MEMBERS)
    for k in kept:
        # S9: it cites at least one readable item, and only readable items
        assert k.sources
        assert set(k.sources) <= set(READABLE)
        # A1: lasting kinds only
        assert k.kind in AGENT_KINDS
        # A4: never only App results
        assert any(READABLE[s].app is None for s in k.sources)
        # S10: no credential in what is stored
        assert credential_reason(k.key) is None
        assert credential_reason(k.content) is None
        for secret in SECRETS:
            assert SECRET_PARTS[secret] not in k.content
            assert SECRET_PARTS[secret] not in k.key
        # A9: agent keys have no @
        assert "@" not in k.key
        assert k.key == k.key.strip()
        assert k.key
        # A5, A9: about names the session's person, and a private change is theirs
        assert k.about is None or (k.about in MEMBERS and k.about == person)
        if k.visibility == "private":
            assert k.about == person
            assert person is not None
            assert k.owner == person
        else:
            assert k.visibility == "shared"
            assert k.owner == SHARED
        # S9, A6: it names the state it replaces, and never revives a retracted entry
        entry = BY_IDENTITY.get((k.key, k.owner))
        assert k.replaces == (entry.change if entry is not None else None)
        if k.op == "remember":
            assert entry is None or entry.status == "active"
            assert k.status == "active"
            assert k.content
        else:
            assert k.op == "forget"
            assert entry is not None
            assert entry.status == "active"
            assert k.status == "retracted"


valid_bodies = st.fixed_dictionaries(
    {
        "key": st.sampled_from(["seat", "meal", "new", "refunds"]),
        "content": st.sampled_from(["Ana prefers window seats.", "Book refundable fares."]),
        "kind": st.sampled_from(AGENT_KINDS),
        "target": st.sampled_from([(None, None), (None, "shared"), ("ana", "shared"),
                                   ("ana", "private")]),
    }
)


@settings(deadline=None)
@given(valid_bodies, st.lists(st.sampled_from(APP_ITEMS), min_size=1, max_size=3),
       st.sampled_from([USER]))
def test_app_results_alone_never_support_a_change_but_the_users_words_do(
    body: dict[str, Any], app_sources: list[str], user: str
) -> None:
    # A4
    about, visibility = body["target"]
    change = remember(body["key"], body["content"], body["kind"], app_sources, about, visibility)
    dropped = only_dropped(change)
    assert "tool results from Apps" in dropped.reason
    kept = only_kept({**change, "sources": [*app_sources, user]})
    assert user in kept.sources


@settings(deadline=None)
@given(valid_bodies, people)
def test_who_a_change_is_about_decides_whether_it_is_kept(
    body: dict[str, Any], person: str | None
) -> None:
    # A5, A9
    base = remember(body["key"], body["content"], body["kind"])
    for about in ["zoe", "ben", "ana", None]:
        for visibility in ["private", "shared", None]:
            kept, dropped = check({**base, "about": about, "visibility": visibility},
                                  person=person)
            if about == "zoe":
                assert kept == []
                assert "no person of the org" in dropped[0].reason
            elif visibility == "private" and about is None:
                assert kept == []
                assert "private" in dropped[0].reason
            elif about is not None and about != person:
                assert kept == []
                assert "own session" in dropped[0].reason
            else:
                assert dropped == []
                owner = about if visibility == "private" and about is not None else SHARED
                assert kept[0].owner == owner
                entry = BY_IDENTITY.get((body["key"], owner))
                assert kept[0].replaces == (entry.change if entry else None)


# ---- S7 for agents: a person's edit while the model worked wins -------------------------------


def test_a_change_to_an_entry_a_person_edited_meanwhile_is_dropped() -> None:
    # S7: the person wins
    kept, _ = check(remember("seat", "Ana prefers aisle seats."))
    edited = [*[e for e in CURRENT if e.key != "seat"],
              AgentEntry("seat", SHARED, "Ana likes the front row.", Kind.PREFERENCE,
                         Status.ACTIVE, None, Visibility.SHARED, 2, "chg-by-ana")]
    still, overtaken = keep_newer_agent_edits(kept, edited)
    assert still == []
    assert [(d.op, d.key) for d in overtaken] == [("remember", "seat")]
    assert "newer edit is kept" in overtaken[0].reason
    assert "aisle" in overtaken[0].proposal


def test_unchanged_entries_pass() -> None:
    # S7
    kept, dropped = check(remember("seat"), remember("new"),
                          remember("meal", about="ana", visibility="private"))
    assert dropped == []
    still, overtaken = keep_newer_agent_edits(kept, CURRENT)
    assert (still, overtaken) == (kept, [])


def test_an_entry_created_meanwhile_wins_over_a_new_one() -> None:
    # S7: the model saw no entry, a person made one meanwhile
    kept, _ = check(remember("new"))
    made = [*CURRENT, agent_entry("new")]
    still, overtaken = keep_newer_agent_edits(kept, made)
    assert still == []
    assert "newer edit is kept" in overtaken[0].reason
    # a person's private entry of that key is another entry: the shared change still applies
    still, overtaken = keep_newer_agent_edits(kept, [*CURRENT, agent_entry("new", owner="ana")])
    assert (still, overtaken) == (kept, [])


@settings(deadline=None)
@given(proposals, st.sets(st.sampled_from(sorted(BY_IDENTITY)), max_size=len(BY_IDENTITY)))
def test_only_overtaken_changes_are_dropped(
    proposed: list[Any], edited: set[tuple[str, str]]
) -> None:
    # S7: a kept change applies unless its entry's current change id differs from `replaces`
    kept, _ = check_agent_changes(proposed, CURRENT, READABLE, PERSON, MEMBERS)
    now = [
        AgentEntry(e.key, e.owner, e.content, e.kind, e.status, e.about, e.visibility, 2,
                   e.change + "-edited")
        if (e.key, e.owner) in edited else e
        for e in CURRENT
    ]
    still, overtaken = keep_newer_agent_edits(kept, now)
    assert len(still) + len(overtaken) == len(kept)
    assert still == [k for k in kept if (k.key, k.owner) not in edited]
    assert [(d.op, d.key) for d in overtaken] == [
        (k.op, k.key) for k in kept if (k.key, k.owner) in edited]
    for d in overtaken:
        assert "newer edit is kept" in d.reason


# ---- S10: a dropped record holds no credential ------------------------------------------------

planted = st.fixed_dictionaries(
    {
        "op": st.sampled_from(["remember", "forget"]),
        "key": st.sampled_from(["seat", "new", "a@b", "hotel"]),
        "content": st.sampled_from(["Ana prefers window seats.", None]),
        "kind": st.sampled_from([*AGENT_KINDS, None]),
        "sources": st.lists(ids, max_size=2),
        "about": st.sampled_from([None, "ana", "ben"]),
        "visibility": st.sampled_from([None, "shared", "private"]),
    }
)


@settings(deadline=None)
@given(planted, st.sampled_from(["key", "content", "about"]), st.sampled_from(SECRETS),
       st.sampled_from(["{}", "Ana: {}", "{} (from the chat)"]), st.lists(well_typed, max_size=3))
def test_a_dropped_record_never_holds_a_planted_credential(
    proposal: dict[str, Any], field: str, secret: str, shape: str, others: list[Any]
) -> None:
    # S10: the drop is recorded with its reason, but the secret is stored nowhere
    proposal = {**proposal, field: shape.format(secret)}
    kept, dropped = check_agent_changes(
        [*others, proposal], CURRENT, READABLE, PERSON, MEMBERS)
    part = SECRET_PARTS[secret]
    for k in kept:
        assert part not in k.content
        assert part not in k.key
        assert k.about is None or part not in k.about
    for d in dropped:
        assert part not in d.proposal
        assert part not in d.key


@pytest.mark.parametrize("field", ["op", "kind", "visibility", "sources"])
def test_a_dropped_record_holds_no_credential_in_any_field(field: str) -> None:
    # S10: the record keeps none, whichever field the model put it in
    proposal = remember("k", kind="procedure")
    proposal[field] = [USER, PASSWORD] if field == "sources" else PASSWORD
    dropped = only_dropped(proposal)
    for recorded in [dropped.op, dropped.key, dropped.reason, dropped.proposal]:
        assert "Xk9!mP2qLz" not in recorded


def test_a_dropped_record_names_whom_it_is_about_and_never_a_credential() -> None:
    # SPEC 7, S10: the record names the person the change is about (trimmed), so their erasure
    # finds it; a credential in `about` is withheld there as anywhere
    assert only_dropped(remember("k", about=" ben ", visibility="private")).about == "ben"
    assert only_dropped(remember("k", kind="nonsense")).about is None
    dropped = only_dropped(remember("k", about=f"Ana: {PASSWORD}"))
    assert dropped.about is not None
    assert "Xk9!mP2qLz" not in dropped.about


def test_learning_checks_see_the_shared_entry_behind_a_private_one() -> None:
    # A6: a retracted entry stays retracted, also behind the person's private entry of the key;
    # learning passes every entry the person may see, not the one-per-key view
    current = [agent_entry("seat", status="retracted"), agent_entry("seat", owner="ana")]
    kept, dropped = check_agent_changes(
        [remember("seat", "Ana prefers aisle seats.")], current, READABLE, PERSON, MEMBERS)
    assert kept == [], kept
    assert "retracted" in dropped[0].reason


# ---- the built-in model on a learning request -------------------------------------------------


def learn(*items: ContextItem, person: str | None = PERSON) -> list[dict[str, Any]]:
    request = ModelRequest(
        messages=[], schema_name=LEARNING_SCHEMA, schema={}, items=list(items), entries=[],
        person=person,
    )
    answer = json.loads(asyncio.run(BuiltinModel().complete(request)))
    changes: list[dict[str, Any]] = answer["changes"]
    return changes


def said(id: str, text: str, role: str = "user", type: str = "message",
         app: str | None = None) -> ContextItem:
    return ContextItem(id=id, type=type, role=role, content=text, app=app,
                       author=PERSON if role == "user" else None)


def as_items(*context: ContextItem) -> dict[str, Item]:
    return {
        c.id: Item(uid=f"u-{c.id}", id=c.id, type=c.type, role=c.role, content=c.content,
                   app=c.app, author=c.author, at=1, seq=n)
        for n, c in enumerate(context)
    }


def test_the_builtin_model_keeps_a_stated_preference_private_to_the_person() -> None:
    # A1, A5, A9
    changes = learn(said("i-07", "I prefer window seats."))
    assert len(changes) == 1
    change = changes[0]
    assert (change["op"], change["kind"], change["about"], change["visibility"]) == (
        "remember", "preference", "ana", "private")
    assert change["sources"] == ["i-07"]
    assert "window seats" in change["content"]


def test_the_builtin_model_keeps_a_procedure_shared() -> None:
    # A1, A9: clearly shared work
    changes = learn(said("i-08", "Always book refundable fares."))
    assert len(changes) == 1
    change = changes[0]
    assert (change["kind"], change["visibility"], change["about"]) == ("procedure", "shared", None)
    assert change["sources"] == ["i-08"]
    assert "refundable fares" in change["content"]


def test_the_builtin_model_keeps_no_facts() -> None:
    # A1: facts for one task stay in session memory
    assert learn(said("i-09", "My name is Ana.")) == []
    assert learn(said("i-09", "Our budget is 1500 EUR.")) == []


def test_the_builtin_model_reads_only_the_users_messages() -> None:
    # A4, S10: only clear user statements count
    assert learn(said("i-10", "I prefer window seats.", role="assistant")) == []
    assert learn(said("i-11", "Always book refundable fares.", role="tool", type="tool_result",
                      app="flights")) == []
    assert learn(said("i-12", "I prefer window seats.", role="tool", type="tool_result")) == []


@st.composite
def sentences(draw: st.DrawFn) -> str:
    template = draw(st.sampled_from([
        "I prefer {}.", "I really like {}.", "I hate {}.", "Always {}.", "Never {}.",
        "Please always {}.", "We decided to {}.", "My name is {}.", "Remember that {}.",
    ]))
    what = draw(st.sampled_from([
        "window seats", "book refundable fares", "quiet hotels near the station",
        "Ana", "check the weather first", "early flights on Mondays", "green tea",
    ]))
    return template.format(what)


@settings(deadline=None)
@given(st.lists(st.tuples(sentences(), st.sampled_from(["user", "user", "assistant", "tool"])),
                min_size=1, max_size=5),
       st.sampled_from([PERSON, None]))
def test_every_change_the_builtin_model_proposes_passes_the_checks(
    said_: list[tuple[str, str]], person: str | None
) -> None:
    # A1, A4, A5, A9, S9: the offline model answers what the checks keep
    context = [
        said(f"i-{n + 10:02d}", text, role=role,
             type="message" if role != "tool" else "tool_result",
             app="flights" if role == "tool" else None)
        for n, (text, role) in enumerate(said_)
    ]
    changes = learn(*context, person=person)
    kept, dropped = check_agent_changes(changes, [], as_items(*context), person, MEMBERS)
    assert dropped == []
    assert len(kept) == len(changes)
    users = {c.id for c in context if c.role == "user"}
    for change, k in zip(changes, kept, strict=True):
        assert set(change["sources"]) <= users
        if k.kind == "preference":
            assert (k.owner, k.visibility) == (person, "private")
        else:
            assert k.owner == SHARED


# ---- the schema sent as response_format --------------------------------------------------------


def test_the_learning_schema_is_strict() -> None:
    # OpenAI strict structured output: every property required, no other properties
    schema = agent_memory_changes_schema()
    assert schema["additionalProperties"] is False
    assert schema["required"] == list(schema["properties"]) == ["changes"]
    change = schema["properties"]["changes"]["items"]
    assert change["additionalProperties"] is False
    assert sorted(change["required"]) == sorted(change["properties"])
    assert set(change["properties"]) == {
        "op", "key", "content", "kind", "sources", "about", "visibility"}
    # A1: the kinds are exactly the lasting ones (null for a forget)
    assert change["properties"]["kind"]["enum"] == [*AGENT_KINDS, None]
    assert set(AGENT_KINDS) == {"procedure", "preference", "decision"}
    assert change["properties"]["visibility"]["enum"] == ["shared", "private", None]


def _branch_item(uid: str, id_: str, turn: str, seq: int) -> Item:
    return Item(uid=uid, id=id_, type="message", role="user", content="Hi.", app=None,
                author=None, at=1, seq=seq, turn=turn, turn_known=True)


def test_a_sessions_part_is_split_where_turns_on_two_branches_share_item_ids() -> None:
    # A3, A4: the helper names items by id. Turns in the order they were recorded: t-1 and t-2
    # on the branch a revert left, t-3 and t-4 on the new one. No part holds one id twice, no
    # turn is split, and each part is one branch's turns.
    part = SessionInput("ses-1", "ana", ("t-1", "t-2", "t-3", "t-4"), (
        _branch_item("u-a", "i-01", "t-1", 1), _branch_item("u-c", "i-01", "t-3", 1),
        _branch_item("u-b", "i-02", "t-2", 2), _branch_item("u-d", "i-02", "t-3", 2),
        _branch_item("u-e", "i-03", "t-4", 3)))
    parts = with_unique_ids(part)
    assert [(p.turns, [i.uid for i in p.items]) for p in parts] == [
        (("t-1", "t-2"), ["u-a", "u-b"]), (("t-3", "t-4"), ["u-c", "u-d", "u-e"])]
    alone = SessionInput("ses-1", "ana", ("t-1", "t-3"), (
        _branch_item("u-a", "i-01", "t-1", 1), _branch_item("u-d", "i-03", "t-3", 3)))
    assert with_unique_ids(alone) == [alone]
