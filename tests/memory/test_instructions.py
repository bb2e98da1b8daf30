"""S5, S6: the memory text a turn's model is given, as a pure function of the entries."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import example, given, settings
from hypothesis import strategies as st

from app.domain.enums import Kind, Status
from app.domain.sessions import KINDS, Entry
from app.memory.turns.instructions import FRAMING, line_of, render


def entry(
    key: str, content: str, updated_at: int, status: str = "active", kind: str = "fact"
) -> Entry:
    return Entry(
        key=key,
        content=content,
        kind=Kind(kind),
        sources=("i-01",),
        updated_at=updated_at,
        status=Status(status),
    )


def marked(n: int, filler: str) -> str:
    """Content whose start and end can both be found in the text: a cut one shows only one."""
    return f"<<{n}>>{filler}<</{n}>>"


@st.composite
def entry_lists(draw: st.DrawFn) -> list[Entry]:
    size = draw(st.integers(min_value=0, max_value=25))
    entries = []
    for n in range(size):
        filler = draw(st.text(alphabet="abc xyz.,", max_size=300))
        entries.append(
            entry(
                key=f"k{n}",
                content=marked(n, filler),
                updated_at=draw(st.integers(min_value=0, max_value=50)),
                status=draw(st.sampled_from(["active", "active", "active", "retracted"])),
                kind=draw(st.sampled_from(KINDS)),
            )
        )
    return draw(st.permutations(entries))


budgets = st.integers(min_value=0, max_value=4000)


def newest_active(entries: Sequence[Entry]) -> list[Entry]:
    return sorted(
        (e for e in entries if e.status == "active"), key=lambda e: (-e.updated_at, e.key)
    )


@given(entry_lists(), budgets)
def test_the_text_is_never_longer_than_the_limit(entries: list[Entry], limit: int) -> None:
    # S6
    assert len(render(entries, limit).text) <= limit


@given(entry_lists(), budgets)
def test_the_newest_entries_come_first(entries: list[Entry], limit: int) -> None:
    # S6: by updatedAt, newest first, in the keys and in the text alike
    shown = render(entries, limit)
    by_key = {e.key: e for e in entries}
    times = [by_key[key].updated_at for key in shown.keys]
    assert times == sorted(times, reverse=True)
    positions = [shown.text.index(by_key[key].content) for key in shown.keys]
    assert positions == sorted(positions)


@given(entry_lists(), budgets)
@example(
    [
        entry("new-big", marked(0, "x" * 400), 3),
        entry("old-small", marked(1, "y"), 1),
    ],
    len(FRAMING) + 100,
)
def test_it_stops_before_the_first_entry_that_does_not_fit(
    entries: list[Entry], limit: int
) -> None:
    # S6: the included entries are a prefix of the newest-first order; the next one would not
    # fit, and no later (smaller) entry is taken after it.
    shown = render(entries, limit)
    order = newest_active(entries)
    included = len(shown.keys)
    assert list(shown.keys) == [e.key for e in order[:included]]
    if included < len(order):
        used = len(FRAMING) + sum(len(line_of(e)) for e in order[:included])
        assert used + len(line_of(order[included])) > limit
        for later in order[included + 1 :]:
            assert later.content not in shown.text


@given(entry_lists(), budgets)
def test_an_entry_is_never_cut(entries: list[Entry], limit: int) -> None:
    # S6: each entry's content is in the text whole, or not at all
    shown = render(entries, limit)
    for n, e in enumerate(sorted(entries, key=lambda e: int(e.key[1:]))):
        start, end = f"<<{n}>>", f"<</{n}>>"
        whole = e.content in shown.text
        assert (start in shown.text) == whole
        assert (end in shown.text) == whole
        assert whole == (e.key in shown.keys)


@given(entry_lists(), budgets)
def test_retracted_entries_are_never_included(entries: list[Entry], limit: int) -> None:
    # S5
    shown = render(entries, limit)
    for e in entries:
        if e.status == "retracted":
            assert e.key not in shown.keys
            assert e.content not in shown.text


@settings(max_examples=50)
@given(entry_lists())
def test_everything_that_fits_is_included(entries: list[Entry]) -> None:
    # S5: with room enough, every active entry goes in, after the framing
    shown = render(entries, 10**6)
    active = newest_active(entries)
    assert list(shown.keys) == [e.key for e in active]
    if active:
        assert shown.text.startswith(FRAMING)
    else:
        assert shown.text == ""


def test_the_text_says_memory_is_past_evidence_and_current_instructions_win() -> None:
    # S5
    shown = render([entry("budget", "The trip budget is 1500 EUR.", 1)], 8000)
    assert shown.keys == ("budget",)
    assert "past evidence" in shown.text
    assert "current instructions" in shown.text
    assert "win" in shown.text
    assert "The trip budget is 1500 EUR." in shown.text


def test_newest_first_by_updated_at_not_by_key_or_input_order() -> None:
    # S6
    entries = [
        entry("a-old", "oldest fact", 100),
        entry("z-new", "newest fact", 300),
        entry("m-mid", "middle fact", 200),
    ]
    shown = render(entries, 8000)
    assert shown.keys == ("z-new", "m-mid", "a-old")
    text = shown.text
    assert text.index("newest fact") < text.index("middle fact") < text.index("oldest fact")


def test_a_big_entry_that_does_not_fit_stops_the_list_even_if_an_older_small_one_would() -> None:
    # S6: no later, smaller entry is taken after the first one that does not fit
    small_new = entry("small-new", "short and new", 300)
    big = entry("big", "b" * 500, 200)
    small_old = entry("small-old", "short and old", 100)
    limit = len(FRAMING) + len(line_of(small_new)) + len(line_of(small_old)) + 10
    shown = render([small_old, big, small_new], limit)
    assert shown.keys == ("small-new",)
    assert "short and old" not in shown.text
    assert "b" * 500 not in shown.text


def test_an_entry_that_fits_exactly_is_included() -> None:
    # S6: at most max_length characters, so exactly max_length is allowed
    one = entry("budget", "The trip budget is 1500 EUR.", 1)
    exact = len(FRAMING) + len(line_of(one))
    assert render([one], exact).keys == ("budget",)
    assert len(render([one], exact).text) == exact
    assert render([one], exact - 1).keys == ()
    assert render([one], exact - 1).text == ""


def test_the_default_budget_is_8000_characters() -> None:
    # S6: a server policy changes the limit; the service default is 8000
    from app.config import Settings

    default = Settings.model_fields["max_length"].default
    assert default == 8000
    entries = [entry(f"k{n:03d}", f"fact number {n} " + "x" * 80, 1000 - n) for n in range(200)]
    shown = render(entries, default)
    assert len(shown.text) <= 8000
    assert 0 < len(shown.keys) < 200
    assert shown.keys == tuple(f"k{n:03d}" for n in range(len(shown.keys)))


def test_no_active_entries_means_no_text() -> None:
    # S5: retracted entries are never sent, and a framing alone says nothing
    shown = render([entry("budget", "The trip budget is 1500 EUR.", 1, status="retracted")], 8000)
    assert shown.text == ""
    assert shown.keys == ()
    assert render([], 8000).text == ""
