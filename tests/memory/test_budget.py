"""S5, S6, A8: one budget for session and agent memory together.

README rule: each side gets half of `max_length`; what one side does not need goes to the other;
each side then follows S6 within its share (newest first, whole entries, stop before the first
entry that does not fit).
"""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import example, given
from hypothesis import strategies as st

from app.domain.enums import Kind, Status
from app.domain.sessions import KINDS, Entry
from app.memory.turns.instructions import (
    AGENT_FRAMING,
    FRAMING,
    PRIVACY_RULES,
    compose,
    line_of,
    render,
    split_budget,
)

# Keys and contents use alphabets without "[" or newline, so a line `- [kind] key: content\n`
# can only start at a line start: a line is in the text exactly when its entry is.
KEY_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789-_."
CONTENT_CHARS = "abc xyz.,!?"

needs = st.integers(min_value=0, max_value=10_000)
totals = st.integers(min_value=0, max_value=10_000)
max_lengths = st.integers(min_value=0, max_value=3000)


def entry(
    key: str, content: str, updated_at: int, status: str = "active", kind: str = "procedure"
) -> Entry:
    return Entry(
        key=key,
        content=content,
        kind=Kind(kind),
        sources=("i-01",),
        updated_at=updated_at,
        status=Status(status),
    )


@st.composite
def entry_lists(draw: st.DrawFn, prefix: str) -> list[Entry]:
    """Entries with distinct keys (all starting with `prefix`), contents of 0..400 characters,
    random status and updatedAt (a small range, so ties by updatedAt happen)."""
    keys = draw(
        st.lists(st.text(alphabet=KEY_CHARS, min_size=1, max_size=6), unique=True, max_size=12)
    )
    # Draw each length first: plain st.text(max_size=400) is mostly short, and long entries
    # are what make a side stop early.
    sizes = [draw(st.integers(min_value=0, max_value=400)) for _ in keys]
    entries = [
        entry(
            key=f"{prefix}{key}",
            content=draw(st.text(alphabet=CONTENT_CHARS, min_size=size, max_size=size)),
            updated_at=draw(st.integers(min_value=0, max_value=20)),
            status=draw(st.sampled_from(["active", "active", "active", "retracted"])),
            kind=draw(st.sampled_from(KINDS)),
        )
        for key, size in zip(keys, sizes, strict=True)
    ]
    return draw(st.permutations(entries))


sessions = entry_lists("s-")
agents = entry_lists("a-")


def newest_active(entries: Sequence[Entry]) -> list[Entry]:
    return sorted(
        (e for e in entries if e.status == "active"), key=lambda e: (-e.updated_at, e.key)
    )


def agent_framing(shared_agent: bool) -> str:
    return AGENT_FRAMING + (PRIVACY_RULES if shared_agent else "")


def full_length(entries: Sequence[Entry], framing: str) -> int:
    """What one side needs to show every active entry: its framing and every line."""
    active = newest_active(entries)
    return len(framing) + sum(len(line_of(e)) for e in active) if active else 0


# --- split_budget ------------------------------------------------------------------------------


@given(needs, needs, totals)
def test_shares_are_non_negative_and_within_the_total(s: int, a: int, total: int) -> None:
    # S6, A8: one budget for both sides
    session, agent = split_budget(s, a, total)
    assert session >= 0
    assert agent >= 0
    assert session + agent <= total


@given(needs, needs, totals)
def test_when_both_needs_fit_each_side_gets_exactly_its_need(s: int, a: int, total: int) -> None:
    if s + a <= total:
        assert split_budget(s, a, total) == (s, a)


@given(needs, needs, totals)
def test_no_side_gets_more_than_it_needs(s: int, a: int, total: int) -> None:
    session, agent = split_budget(s, a, total)
    assert session <= s
    assert agent <= a


@given(needs, needs, totals)
@example(5000, 5000, 7)  # odd total: the session's half is the floor, the agent's the rest
def test_each_side_is_guaranteed_its_half(s: int, a: int, total: int) -> None:
    # README: each side gets half of max_length (the session total // 2, the agent the rest)
    session, agent = split_budget(s, a, total)
    assert session >= min(s, total // 2)
    assert agent >= min(a, total - total // 2)


@given(needs, needs, totals)
def test_a_side_gets_less_than_its_need_only_when_the_whole_budget_is_used(
    s: int, a: int, total: int
) -> None:
    # README: what one side does not need goes to the other, so nothing is left over while a
    # side is short. (This is exact: a shortfall on either side means sum == total; when both
    # are short, each has exactly its half.)
    session, agent = split_budget(s, a, total)
    if session < s or agent < a:
        assert session + agent == total
    if session < s and agent < a:
        assert (session, agent) == (total // 2, total - total // 2)


@given(needs, needs, totals)
def test_the_shares_are_the_halves_topped_up_by_what_the_other_side_leaves(
    s: int, a: int, total: int
) -> None:
    # A closed form of the rule: a side gets its need, capped at the larger of its half and
    # what the other side's need leaves of the total.
    half = total // 2
    assert split_budget(s, a, total) == (
        min(s, max(half, total - a)),
        min(a, max(total - half, total - s)),
    )


def test_split_budget_examples() -> None:
    assert split_budget(0, 0, 8000) == (0, 0)
    assert split_budget(1000, 9000, 8000) == (1000, 7000)  # the session's leftover to the agent
    assert split_budget(9000, 1000, 8000) == (7000, 1000)  # and the agent's to the session
    assert split_budget(9000, 9000, 8000) == (4000, 4000)
    assert split_budget(9000, 9000, 7) == (3, 4)
    assert split_budget(5, 5, 0) == (0, 0)


# --- compose -----------------------------------------------------------------------------------


@given(sessions, agents, max_lengths, st.booleans())
def test_the_text_is_never_longer_than_the_limit(
    session: list[Entry], agent: list[Entry], max_length: int, shared_agent: bool
) -> None:
    # S6, A8: one limit for the whole text
    assert len(compose(session, agent, max_length, shared_agent).text) <= max_length


@given(sessions, agents, max_lengths, st.booleans())
def test_only_active_entries_are_listed_and_each_at_most_once(
    session: list[Entry], agent: list[Entry], max_length: int, shared_agent: bool
) -> None:
    # S5, A8: retracted entries are never sent
    shown = compose(session, agent, max_length, shared_agent)
    assert set(shown.keys) <= {e.key for e in session if e.status == "active"}
    assert set(shown.agent_keys) <= {e.key for e in agent if e.status == "active"}
    assert len(set(shown.keys)) == len(shown.keys)
    assert len(set(shown.agent_keys)) == len(shown.agent_keys)
    for e in [*session, *agent]:
        if e.status == "retracted":
            assert line_of(e) not in shown.text


@given(sessions, agents, max_lengths, st.booleans())
def test_listed_entries_are_whole_in_the_text_and_unlisted_ones_absent(
    session: list[Entry], agent: list[Entry], max_length: int, shared_agent: bool
) -> None:
    # S6: an entry is never cut
    shown = compose(session, agent, max_length, shared_agent)
    for e in session:
        assert (line_of(e) in shown.text) == (e.key in shown.keys)
    for e in agent:
        assert (line_of(e) in shown.text) == (e.key in shown.agent_keys)


@given(sessions, agents, max_lengths, st.booleans())
def test_each_side_is_a_newest_first_prefix(
    session: list[Entry], agent: list[Entry], max_length: int, shared_agent: bool
) -> None:
    # S6, A8: newest first (by updatedAt, ties by key); within each side, no entry is taken
    # after the first one that was skipped
    shown = compose(session, agent, max_length, shared_agent)
    own = [e.key for e in newest_active(session)]
    learned = [e.key for e in newest_active(agent)]
    assert list(shown.keys) == own[: len(shown.keys)]
    assert list(shown.agent_keys) == learned[: len(shown.agent_keys)]


@given(sessions, agents, max_lengths, st.booleans())
def test_the_text_is_the_session_part_then_the_agent_part(
    session: list[Entry], agent: list[Entry], max_length: int, shared_agent: bool
) -> None:
    # S5, A8: each part is its framing and its lines in the order listed; a part with no entry
    # is absent (no framing alone); the agent part comes after the session part
    shown = compose(session, agent, max_length, shared_agent)
    by_key = {e.key: e for e in [*session, *agent]}
    own = FRAMING + "".join(line_of(by_key[k]) for k in shown.keys) if shown.keys else ""
    learned = (
        agent_framing(shared_agent) + "".join(line_of(by_key[k]) for k in shown.agent_keys)
        if shown.agent_keys
        else ""
    )
    assert shown.text == own + learned


@given(sessions, agents, max_lengths, st.booleans())
def test_a_shared_agent_part_carries_the_privacy_rules(
    session: list[Entry], agent: list[Entry], max_length: int, shared_agent: bool
) -> None:
    # A9: on a shared agent, what it tells one person is clearly shared work only
    shown = compose(session, agent, max_length, shared_agent)
    assert (PRIVACY_RULES in shown.text) == (shared_agent and bool(shown.agent_keys))
    if shown.agent_keys:
        rest = shown.text[shown.text.index(AGENT_FRAMING) :]
        for key in shown.agent_keys:
            assert line_of(next(e for e in agent if e.key == key)) in rest


@given(sessions, agents, max_lengths, st.booleans())
def test_when_everything_fits_every_active_entry_of_both_sides_is_included(
    session: list[Entry], agent: list[Entry], max_length: int, shared_agent: bool
) -> None:
    # S5, A8
    framing = agent_framing(shared_agent)
    if full_length(session, FRAMING) + full_length(agent, framing) <= max_length:
        shown = compose(session, agent, max_length, shared_agent)
        assert list(shown.keys) == [e.key for e in newest_active(session)]
        assert list(shown.agent_keys) == [e.key for e in newest_active(agent)]


@given(sessions, agents, max_lengths, st.booleans())
def test_each_side_shows_at_least_what_its_half_would_hold(
    session: list[Entry], agent: list[Entry], max_length: int, shared_agent: bool
) -> None:
    # README: each side gets half of max_length, whatever the other side needs
    framing = agent_framing(shared_agent)
    shown = compose(session, agent, max_length, shared_agent)
    half = max_length // 2
    assert len(shown.keys) >= len(render(session, half).keys)
    assert len(shown.agent_keys) >= len(render(agent, max_length - half, framing).keys)


@given(sessions, agents, max_lengths, st.booleans())
def test_what_one_side_does_not_need_goes_to_the_other(
    session: list[Entry], agent: list[Entry], max_length: int, shared_agent: bool
) -> None:
    # README: a side may use everything the other side's text leaves of the budget
    framing = agent_framing(shared_agent)
    own_alone = render(session, max_length)
    learned_alone = render(agent, max_length, framing)
    shown = compose(session, agent, max_length, shared_agent)
    assert len(shown.agent_keys) >= len(
        render(agent, max_length - len(own_alone.text), framing).keys
    )
    assert len(shown.keys) >= len(render(session, max_length - len(learned_alone.text)).keys)


def test_a_small_session_side_leaves_its_room_to_the_agent() -> None:
    # README: the session needs little, so the agent gets more than half
    session = [entry("s-budget", "The trip budget is 1500 EUR.", 5)]
    agent = [entry(f"a-{n:02d}", "x" * 300, 100 - n) for n in range(10)]
    max_length = 2000
    shown = compose(session, agent, max_length)
    assert shown.keys == ("s-budget",)
    session_text = render(session, max_length).text
    agent_text = shown.text[len(session_text) :]
    assert len(agent_text) > max_length // 2
    assert len(shown.text) <= max_length
    assert shown.agent_keys == tuple(f"a-{n:02d}" for n in range(len(shown.agent_keys)))


def test_a_big_agent_side_cannot_push_the_session_below_its_half() -> None:
    # README: each side gets half
    session = [entry(f"s-{n:02d}", "y" * 300, 100 - n) for n in range(10)]
    agent = [entry(f"a-{n:02d}", "x" * 300, 100 - n) for n in range(10)]
    shown = compose(session, agent, 2000, shared_agent=True)
    assert shown.keys == render(session, 1000).keys
    assert shown.agent_keys == render(agent, 1000, AGENT_FRAMING + PRIVACY_RULES).keys
    assert shown.keys
    assert shown.agent_keys
    assert PRIVACY_RULES in shown.text


def test_the_stop_rule_holds_within_the_agent_side() -> None:
    # S6, A8: a big agent entry that does not fit stops the agent side, even if an older small
    # one would fit
    small_new = entry("a-small-new", "short and new", 300)
    big = entry("a-big", "b" * 400, 200)
    small_old = entry("a-small-old", "short and old", 100)
    max_length = len(AGENT_FRAMING) + len(line_of(small_new)) + len(line_of(small_old)) + 10
    shown = compose([], [small_old, big, small_new], max_length)
    assert shown.keys == ()
    assert shown.agent_keys == ("a-small-new",)
    assert "short and old" not in shown.text
