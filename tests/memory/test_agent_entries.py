"""A1, A5, A9, S10: agent memory's pure rules of who sees, forgets and writes what."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from app.api.bodies import AgentRememberBody, nested_command
from app.domain.agents import AGENT_KINDS, SHARED, AgentEntry, Source
from app.domain.enums import Kind, Status, Visibility
from app.domain.principals import Principal
from app.domain.sessions import KINDS
from app.errors import ValidationError
from app.memory.agents.entries import may_reach, owner_of, reachable, target_of, view_of
from app.memory.changes.commands import (
    AgentForget,
    AgentRemember,
    check_agent_forget,
    check_agent_remember,
)

BEN = Principal("acme", person="ben")
ANA = Principal("acme", person="ana")
SERVICE = Principal("acme", service="platform")
OWNERS = (SHARED, "ana", "ben")


def agent_entry(
    key: str, owner: str = SHARED, updated_at: int = 1, content: str | None = None
) -> AgentEntry:
    visibility = Visibility.SHARED if owner == SHARED else Visibility.PRIVATE
    return AgentEntry(
        key=key,
        owner=owner,
        content=content if content is not None else f"{key} of {owner or 'everyone'}",
        kind=Kind.PREFERENCE,
        status=Status.ACTIVE,
        about=owner or None,
        visibility=visibility,
        updated_at=updated_at,
        change=f"chg-{key}-{owner}",
    )


@st.composite
def entry_sets(draw: st.DrawFn, key_chars: str = "abcd") -> list[AgentEntry]:
    """Entries owned by nobody (shared), ana or ben; keys from a small alphabet so the same key
    often has entries of several owners. (agent, key, owner) is an entry's identity, so each
    (key, owner) pair is drawn once."""
    pairs = draw(
        st.lists(
            st.tuples(st.text(alphabet=key_chars, min_size=1, max_size=2), st.sampled_from(OWNERS)),
            unique=True,
            max_size=20,
        )
    )
    return [
        AgentEntry(
            key=key,
            owner=owner,
            content=f"{key} of {owner or 'everyone'}",
            kind=draw(st.sampled_from(AGENT_KINDS)),
            status=draw(st.sampled_from([Status.ACTIVE, Status.RETRACTED])),
            about=owner or draw(st.sampled_from([None, "ana", "ben"])),  # A5: who said it
            visibility=Visibility.SHARED if owner == SHARED else Visibility.PRIVATE,
            updated_at=draw(st.integers(min_value=0, max_value=10)),
            change=f"chg-{n}",
        )
        for n, (key, owner) in enumerate(pairs)
    ]


# --- view_of -----------------------------------------------------------------------------------


@given(entry_sets())
def test_a_person_never_sees_another_members_private_entries(entries: list[AgentEntry]) -> None:
    # A9
    view = view_of(BEN, entries)
    assert all(e.owner in (SHARED, "ben") for e in view.values())
    assert all(e.owner != "ana" for e in view.values())


@given(entry_sets())
def test_a_person_sees_every_shared_entry_and_their_own_each_under_its_name(
    entries: list[AgentEntry],
) -> None:
    # A9, SPEC section 6: shared with everyone under the key, P's own under `key@P`; a private
    # entry and the shared one of its key are two entries, both listed
    view = view_of(BEN, entries)
    mine = [e for e in entries if e.owner in (SHARED, "ben")]
    assert len(view) == len(mine)
    for e in mine:
        assert view[e.key if e.owner == SHARED else f"{e.key}@ben"] is e


@given(entry_sets())
def test_the_service_view_lists_every_entry_exactly_once(entries: list[AgentEntry]) -> None:
    # A9: a service token acts for no person and sees all; private ones under `key@owner`
    view = view_of(SERVICE, entries)
    assert len(view) == len(entries)
    assert sorted(map(id, view.values())) == sorted(map(id, entries))
    for e in entries:
        listed = e.key if e.owner == SHARED else f"{e.key}@{e.owner}"
        assert view[listed] is e


@given(entry_sets(), st.sampled_from([BEN, ANA, SERVICE]))
def test_the_view_is_ordered_newest_first(entries: list[AgentEntry], who: Principal) -> None:
    # A8, A10: newest first (ties by the key listed)
    view = view_of(who, entries)
    order = [(-e.updated_at, key) for key, e in view.items()]
    assert order == sorted(order)


def test_ben_sees_his_seat_and_the_shared_tone_not_anas_seat() -> None:
    # A9
    shared_seat = agent_entry("seat", SHARED, 1, "Members pick seats themselves.")
    anas = agent_entry("seat", "ana", 3, "Ana prefers window seats.")
    bens = agent_entry("seat", "ben", 2, "Ben prefers aisle seats.")
    tone = agent_entry("tone", SHARED, 4, "Replies are short.")
    entries = [bens, anas, tone, shared_seat]
    assert view_of(BEN, entries) == {"tone": tone, "seat@ben": bens, "seat": shared_seat}
    assert list(view_of(BEN, entries)) == ["tone", "seat@ben", "seat"]
    assert view_of(ANA, entries) == {"tone": tone, "seat@ana": anas, "seat": shared_seat}
    assert view_of(Principal("acme", person="cleo"), entries) == {
        "tone": tone,
        "seat": shared_seat,
    }
    assert list(view_of(SERVICE, entries)) == ["tone", "seat@ana", "seat@ben", "seat"]


def test_an_agent_key_with_an_at_sign_is_refused() -> None:
    # A9: every reader sees private entries as `key@person`, so no agent key may look like
    # one (else a shared `seat@ana` and ana's private `seat` would collide in a view)
    # as a REST body names it
    with pytest.raises(ValidationError) as caught, nested_command(AgentRememberBody):
        check_agent_remember(AgentRemember("seat@ana", "The seat plan.", "decision"), SERVICE)
    assert caught.value.field == "command.key"


def test_a_forget_names_a_bad_key_before_a_bad_about_as_a_remember_does() -> None:
    # A10: both commands read the key first, so the same two faults name the same field
    faults = {"key": "seat@ana", "about": " "}
    with pytest.raises(ValidationError) as remembered:
        check_agent_remember(AgentRemember(content="Aisle.", kind="preference", **faults), SERVICE)
    with pytest.raises(ValidationError) as forgotten:
        check_agent_forget(AgentForget(**faults))
    assert forgotten.value.field == remembered.value.field == "key"


# --- target_of ---------------------------------------------------------------------------------


@given(entry_sets(), st.sampled_from("abcd"), st.sampled_from([None, "ana", "ben", "cleo"]))
def test_a_persons_forget_never_targets_another_members_entry(
    entries: list[AgentEntry], key: str, about: str | None
) -> None:
    # A9: no member's write can touch another member's private entry, whatever `about` says
    target = target_of(entries, "ben", key, about)
    assert target is None or (target.key == key and target.owner in (SHARED, "ben"))
    if about == "ana":
        assert target is None


@given(entry_sets(), st.sampled_from("abcd"))
def test_a_persons_forget_names_the_shared_entry_without_about_and_their_own_with_it(
    entries: list[AgentEntry], key: str
) -> None:
    # A9, SPEC section 6: no `about` is the shared entry of the key; `about` their own
    own = [e for e in entries if e.key == key and e.owner == "ben"]
    shared = [e for e in entries if e.key == key and e.owner == SHARED]
    assert target_of(entries, "ben", key, None) == (shared[0] if shared else None)
    assert target_of(entries, "ben", key, "ben") == (own[0] if own else None)


@given(entry_sets(), st.sampled_from("abcd"), st.sampled_from(["ana", "ben"]))
def test_a_service_forget_with_about_targets_that_persons_entry(
    entries: list[AgentEntry], key: str, about: str
) -> None:
    # A9: a service token reaches every entry; `about` picks that person's private one
    found = [e for e in entries if e.key == key and e.owner == about]
    assert target_of(entries, None, key, about) == (found[0] if found else None)
    shared = [e for e in entries if e.key == key and e.owner == SHARED]
    assert target_of(entries, None, key, None) == (shared[0] if shared else None)


def test_forget_examples() -> None:
    # A9
    shared_seat = agent_entry("seat", SHARED)
    anas = agent_entry("seat", "ana")
    bens = agent_entry("seat", "ben")
    assert target_of([shared_seat, anas, bens], "ben", "seat", None) is shared_seat
    assert target_of([anas, bens], "ben", "seat", None) is None
    assert target_of([shared_seat, anas], "ben", "seat", None) is shared_seat
    assert target_of([shared_seat, anas], "ben", "seat", "ana") is None
    assert target_of([anas], "ben", "seat", None) is None
    assert target_of([shared_seat, anas, bens], "ben", "seat", "ben") is bens
    assert target_of([shared_seat, anas, bens], None, "seat", "ana") is anas


# --- reachable sources --------------------------------------------------------------------------


def test_a_source_in_another_members_session_is_left_out() -> None:
    # A3, A9, SPEC section 6: a person reaches their own sessions; a service token every one
    anas = Source("ses-ana", "i-01", "itm-1", person="ana")
    bens = Source("ses-ben", "i-01", "itm-2", person="ben")
    assert reachable("ben", [anas, bens]) == (bens,)
    assert reachable("ana", [anas, bens]) == (anas,)
    assert reachable(None, [anas, bens]) == (anas, bens)
    assert not may_reach("ben", Source("ses-x", "i-01", "itm-3", person=None))


def test_the_view_shows_each_reader_the_sources_they_may_reach() -> None:
    # A3, A9: the entry stays; only the sources of sessions the reader may not reach go
    anas = Source("ses-ana", "i-01", "itm-1", person="ana")
    shared = AgentEntry("tone", SHARED, "Replies are short.", Kind.PREFERENCE, Status.ACTIVE,
                        None, Visibility.SHARED, 1, "chg-1", (anas,))
    assert view_of(BEN, [shared])["tone"].sources == ()
    assert view_of(ANA, [shared])["tone"].sources == (anas,)
    assert view_of(SERVICE, [shared])["tone"].sources == (anas,)


def test_owner_of() -> None:
    # A9: a private entry is owned by the person it is about; a shared one by nobody
    assert owner_of("private", "ana") == "ana"
    assert owner_of("shared", "ana") == SHARED
    assert owner_of("shared", None) == SHARED


# --- check_agent_remember ----------------------------------------------------------------------


def remember(
    kind: str = "preference",
    visibility: str = "shared",
    about: str | None = None,
    content: str = "Ben prefers aisle seats.",
) -> AgentRemember:
    return AgentRemember("seat", content, kind, about, visibility)


def field_of(command: AgentRemember, who: Principal) -> str:
    """The field a refused command names, as a REST body that nests it names it."""
    with pytest.raises(ValidationError) as caught, nested_command(AgentRememberBody):
        check_agent_remember(command, who)
    return caught.value.field


@pytest.mark.parametrize("kind", [k for k in KINDS if k not in AGENT_KINDS])
def test_only_lasting_kinds_are_kept(kind: str) -> None:
    # A1: facts for one task (and hypotheses) stay in session memory
    assert kind in ("fact", "hypothesis")
    assert field_of(remember(kind=kind), BEN) == "command.kind"


@pytest.mark.parametrize("kind", AGENT_KINDS)
def test_each_lasting_kind_is_accepted(kind: str) -> None:
    # A1
    assert check_agent_remember(remember(kind=kind), BEN) == remember(kind=kind)


def test_a_private_entry_names_the_person_it_is_about() -> None:
    # A9 and SPEC section 6: a private entry names the person it is `about`
    assert field_of(remember(visibility="private"), BEN) == "command.visibility"
    assert field_of(remember(visibility="private"), SERVICE) == "command.visibility"


def test_an_unknown_visibility_is_refused() -> None:
    assert field_of(remember(visibility="secret"), BEN) == "command.visibility"


def test_a_person_keeps_private_entries_about_themselves_only() -> None:
    # A9: no member's write can touch (or reveal) another member's private entry
    assert field_of(remember(visibility="private", about="ana"), BEN) == "command.about"
    mine = remember(visibility="private", about="ben")
    assert check_agent_remember(mine, BEN) == mine


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz-", min_size=1, max_size=20))
@example("ana")
@example("ben")
def test_a_service_token_may_write_private_entries_about_anyone(person: str) -> None:
    # A9: a service token acts for no person
    command = remember(visibility="private", about=person)
    assert check_agent_remember(command, SERVICE) == command
    assert check_agent_remember(command, Principal("acme")) == command


def test_a_shared_entry_may_say_who_said_it() -> None:
    # A5: an entry can say who said what, and stays shared
    command = remember(about="ana")
    assert check_agent_remember(command, BEN) == command


@pytest.mark.parametrize(
    "content",
    [
        "my password is Xk9!mP2qLz",
        "The deploy key is sk-abcdefghijklmnop1234",
        "Use https://ben:hunter2@example.com/repo",
    ],
)
def test_a_credential_is_never_stored(content: str) -> None:
    # S10: a direct Remember of one is refused with a ValidationError on `content`
    assert field_of(remember(content=content), BEN) == "command.content"
    assert field_of(remember(content=content), SERVICE) == "command.content"
