"""S9, S10: every change a model proposes is checked before it is applied; a change that
breaks a rule is dropped with its reason, the others apply."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from app.domain.enums import ChangeOp, Kind, Status
from app.domain.sessions import KINDS, Entry
from app.memory.changes.checks import (
    ERASED_SINCE,
    ERASED_WITHHELD,
    Dropped,
    Kept,
    check_changes,
    withhold_erased,
)

READABLE = {"i-03", "i-04"}
PROCESSED = {"i-01", "i-02"}


def entry(key: str, content: str, status: str = "active", change: str = "") -> Entry:
    return Entry(
        key=key,
        content=content,
        kind=Kind.FACT,
        sources=("i-01",),
        updated_at=1,
        status=Status(status),
        change=change or f"chg-{key}",
    )


CURRENT = {
    "budget": entry("budget", "The trip budget is 1500 EUR."),
    "hotel": entry("hotel", "The hotel is near the station.", status="retracted"),
}


def remember(
    key: str, content: str, sources: list[str], kind: str | None = "fact"
) -> dict[str, Any]:
    return {"op": "remember", "key": key, "content": content, "kind": kind, "sources": sources}


GOOD = remember("user-name", "The user's name is Ana.", ["i-03"])


def check(*proposed: Any) -> tuple[list[Kept], list[Dropped]]:
    return check_changes(list(proposed), CURRENT, READABLE, PROCESSED)


def only_drop(proposed: Any) -> Dropped:
    """Check `proposed` next to a good change: the good one is kept, `proposed` dropped."""
    kept, dropped = check(GOOD, proposed)
    assert [k.key for k in kept] == ["user-name"]
    assert kept[0].content == "The user's name is Ana."
    assert len(dropped) == 1, dropped
    return dropped[0]


def test_a_good_remember_is_kept_with_its_sources() -> None:
    # S9
    kept, dropped = check(
        remember("seat", "Ana prefers window seats.", ["i-03", "i-04"], kind="preference")
    )
    assert dropped == []
    assert kept == [
        Kept(
            ChangeOp.REMEMBER,
            "seat",
            "Ana prefers window seats.",
            Kind.PREFERENCE,
            Status.ACTIVE,
            ("i-03", "i-04"),
            None,
        )
    ]


def test_a_remember_of_an_existing_key_replaces_its_current_state() -> None:
    # S9: applied to the newest memory; the change names the state it replaces
    kept, dropped = check(remember("budget", "The trip budget is 2000 EUR.", ["i-04"]))
    assert dropped == []
    assert [(k.key, k.content, k.status, k.replaces) for k in kept] == [
        ("budget", "The trip budget is 2000 EUR.", "active", "chg-budget")
    ]


def test_a_forget_of_an_active_entry_is_kept_and_retracts_it() -> None:
    # S9
    kept, dropped = check({"op": "forget", "key": "budget", "sources": ["i-04"]})
    assert dropped == []
    assert [(k.op, k.key, k.status, k.sources, k.replaces) for k in kept] == [
        ("forget", "budget", "retracted", ("i-04",), "chg-budget")
    ]


def test_a_change_with_no_source_is_dropped() -> None:
    # S9: it names at least one unprocessed item as a source
    dropped = only_drop(remember("seat", "Ana prefers window seats.", []))
    assert (dropped.op, dropped.key) == ("remember", "seat")
    assert "no source" in dropped.reason


def test_a_change_without_the_sources_field_is_dropped() -> None:
    # S9
    dropped = only_drop(
        {"op": "remember", "key": "seat", "content": "Window seats.", "kind": "preference"}
    )
    assert "no source" in dropped.reason


def test_a_change_citing_a_processed_item_is_dropped() -> None:
    # S9: it reads only unprocessed items
    dropped = only_drop(remember("seat", "Ana prefers window seats.", ["i-03", "i-01"]))
    assert dropped.key == "seat"
    assert "already processed" in dropped.reason
    assert "i-01" in dropped.reason


def test_a_change_citing_an_unknown_item_is_dropped() -> None:
    # S9: only items of this session that this consolidation read
    dropped = only_drop(remember("seat", "Ana prefers window seats.", ["i-99"]))
    assert dropped.key == "seat"
    assert "not among the unprocessed items" in dropped.reason
    assert "i-99" in dropped.reason


def test_a_second_change_for_the_same_key_is_dropped() -> None:
    # S9: at most one change per key per consolidation
    kept, dropped = check(
        GOOD,
        remember("seat", "Ana prefers window seats.", ["i-03"]),
        remember("seat", "Ana prefers aisle seats.", ["i-04"]),
    )
    assert [(k.key, k.content) for k in kept] == [
        ("user-name", "The user's name is Ana."),
        ("seat", "Ana prefers window seats."),
    ]
    assert [(d.key, d.reason) for d in dropped] == [("seat", "a second change for the same key")]
    assert "aisle" in dropped[0].proposal


def test_a_forget_and_a_remember_of_one_key_is_two_changes_for_that_key() -> None:
    # S9
    kept, dropped = check(
        {"op": "forget", "key": "budget", "sources": ["i-03"]},
        remember("budget", "The budget is 900 EUR.", ["i-04"]),
    )
    assert [(k.op, k.key) for k in kept] == [("forget", "budget")]
    assert [d.key for d in dropped] == ["budget"]
    assert "same key" in dropped[0].reason


def test_reviving_a_retracted_entry_is_dropped() -> None:
    # S9: a retracted entry stays retracted; only a person's Remember brings it back
    dropped = only_drop(remember("hotel", "The hotel is near the beach.", ["i-03"]))
    assert dropped.key == "hotel"
    assert "retracted" in dropped.reason


def test_forgetting_an_already_retracted_entry_is_dropped() -> None:
    # S9
    dropped = only_drop({"op": "forget", "key": "hotel", "sources": ["i-03"]})
    assert dropped.key == "hotel"
    assert "retracted" in dropped.reason


def test_forgetting_an_unknown_key_is_dropped() -> None:
    # S9
    dropped = only_drop({"op": "forget", "key": "nothing-here", "sources": ["i-03"]})
    assert dropped.key == "nothing-here"
    assert "does not hold" in dropped.reason


def test_a_change_holding_a_credential_is_dropped() -> None:
    # S10: content that holds a credential is never stored
    dropped = only_drop(remember("wifi", "The wifi password is Xk9!mP2qL", ["i-03"]))
    assert dropped.key == "wifi"
    assert "credential" in dropped.reason


def test_a_change_holding_an_api_key_is_dropped() -> None:
    # S10
    token = "ghp_" + "A1b2C3d4E5" * 4
    dropped = only_drop(remember("github", f"Ana's GitHub token: {token}", ["i-03"]))
    assert "credential" in dropped.reason
    # the reason names the kind of credential, never the secret itself
    assert token not in dropped.reason


def test_a_dropped_credential_is_not_kept_in_the_record() -> None:
    # S10: the drop is recorded with its reason, but the secret is stored nowhere
    secret = "sk-" + "Zx8Yw7Vu6T" * 5
    dropped = only_drop(remember("openai", f"Ana's OpenAI key: {secret}", ["i-03"]))
    assert "credential" in dropped.reason
    assert secret not in dropped.proposal
    assert secret not in dropped.reason
    assert json.loads(dropped.proposal)["key"] == "openai"


def test_a_credential_in_the_key_is_dropped_and_not_recorded() -> None:
    # S10: a key is stored too
    secret = "AKIA" + "Q2W3E4R5T6Y7U8I9"
    dropped = only_drop(remember(f"aws {secret}", "Ana's AWS access key id.", ["i-03"]))
    assert "credential" in dropped.reason
    assert secret not in dropped.key
    assert secret not in dropped.proposal


def test_a_malformed_change_holding_a_credential_is_not_recorded_whole() -> None:
    # S10
    dropped = only_drop({"op": "remember", "content": "the password is Hunter2!x", "x": 1})
    assert dropped.reason == "malformed change"
    assert "Hunter2" not in dropped.proposal


def test_a_change_with_an_unknown_kind_is_dropped() -> None:
    # S1, S9: kind is one of fact, decision, preference, procedure, hypothesis
    dropped = only_drop(remember("seat", "Ana prefers window seats.", ["i-03"], kind="opinion"))
    assert dropped.key == "seat"
    assert "unknown kind" in dropped.reason
    assert "opinion" in dropped.reason


def test_a_remember_without_a_kind_is_dropped() -> None:
    # S1
    dropped = only_drop(remember("seat", "Ana prefers window seats.", ["i-03"], kind=None))
    assert "unknown kind" in dropped.reason


def test_a_kind_outside_the_allowed_ones_is_dropped() -> None:
    # A1 uses the same checks with fewer kinds
    kept, dropped = check_changes(
        [remember("budget-x", "The budget is 5 EUR.", ["i-03"])],
        {},
        READABLE,
        PROCESSED,
        allowed_kinds=("procedure", "preference", "decision"),
    )
    assert kept == []
    assert "unknown kind" in dropped[0].reason


def test_a_remember_with_empty_content_is_dropped() -> None:
    # S1: an entry holds a fact
    dropped = only_drop(remember("seat", "   ", ["i-03"]))
    assert "content" in dropped.reason


def test_a_change_with_an_empty_key_is_dropped() -> None:
    # S1: one key holds one fact
    dropped = only_drop(remember("  ", "Ana prefers window seats.", ["i-03"]))
    assert "key" in dropped.reason


def test_an_unknown_op_is_dropped() -> None:
    dropped = only_drop({"op": "rename", "key": "budget", "sources": ["i-03"]})
    assert dropped.op == "rename"
    assert "unknown op" in dropped.reason


def test_malformed_changes_are_dropped() -> None:
    # S11: whatever the model answers, only well-formed changes apply
    for bad in [
        "remember everything",
        42,
        None,
        ["op", "remember"],
        {"op": "remember"},
        {"key": "seat", "content": "x", "kind": "fact", "sources": ["i-03"]},
        {"op": "remember", "key": "seat", "content": "x", "kind": "fact", "sources": "i-03"},
        {"op": "remember", "key": 7, "content": "x", "kind": "fact", "sources": ["i-03"]},
    ]:
        dropped = only_drop(bad)
        assert dropped.reason == "malformed change", bad
        assert dropped.proposal  # what the model sent is recorded


def test_every_kind_of_bad_change_in_one_answer_is_dropped_and_the_good_ones_kept() -> None:
    # S9, S10: a change that breaks a rule is dropped and recorded, the rest apply
    kept, dropped = check(
        GOOD,
        remember("no-source", "Some fact.", []),
        remember("processed", "Some fact.", ["i-02"]),
        remember("unknown-item", "Some fact.", ["i-77"]),
        remember("budget", "The trip budget is 1800 EUR.", ["i-04"]),
        remember("budget", "The trip budget is 1900 EUR.", ["i-04"]),
        remember("hotel", "The hotel is downtown.", ["i-03"]),
        remember("secret", "Use the key AKIAIOSFODNN7EXAMPLE for S3.", ["i-03"]),
        remember("bad-kind", "Some fact.", ["i-03"], kind="rumour"),
        {"op": "remember", "key": "malformed", "sources": "i-03"},
        remember("seat", "Ana prefers window seats.", ["i-04"], kind="preference"),
    )
    assert [(k.key, k.content) for k in kept] == [
        ("user-name", "The user's name is Ana."),
        ("budget", "The trip budget is 1800 EUR."),
        ("seat", "Ana prefers window seats."),
    ]
    reasons = {(d.key, d.reason.split(":")[0].split(" (")[0]) for d in dropped}
    assert reasons == {
        ("no-source", "cites no source"),
        ("processed", "cites an item already processed"),
        ("unknown-item", "cites an item that is not among the unprocessed items"),
        ("budget", "a second change for the same key"),
        ("hotel", "revives a retracted entry"),
        ("secret", "holds a credential"),
        ("bad-kind", "unknown kind 'rumour'"),
        ("malformed", "malformed change"),
    }
    for d in dropped:
        assert json.loads(d.proposal)["key"] == d.key


# A property: whatever the model proposes, what is kept obeys S9.

ids = st.sampled_from(["i-01", "i-02", "i-03", "i-04", "i-99"])
keys = st.sampled_from(["budget", "hotel", "seat", "name", ""])
raw_changes = st.one_of(
    st.fixed_dictionaries(
        {
            "op": st.sampled_from(["remember", "forget", "merge"]),
            "key": keys,
            "sources": st.lists(ids, max_size=3),
        },
        optional={
            "content": st.one_of(st.none(), st.sampled_from(["Fact.", "", "pwd: hunter22!"])),
            "kind": st.one_of(st.none(), st.sampled_from([*KINDS, "rumour"])),
        },
    ),
    st.none(),
    st.integers(),
    st.text(max_size=5),
)


@settings(deadline=None)  # the first credential check loads detect-secrets' plugins
@given(st.lists(raw_changes, max_size=12))
def test_what_is_kept_always_obeys_the_rules(proposed: list[Any]) -> None:
    # S9, S10
    kept, dropped = check_changes(proposed, CURRENT, READABLE, PROCESSED)
    assert len(kept) + len(dropped) == len(proposed)
    assert len({k.key for k in kept}) == len(kept)
    for k in kept:
        assert k.sources
        assert set(k.sources) <= READABLE
        assert k.key.strip()
        assert k.kind in KINDS
        current = CURRENT.get(k.key)
        if k.op == "remember":
            assert current is None or current.status == "active"
            assert "hunter22" not in k.content
        else:
            assert current is not None
            assert current.status == "active"
    for d in dropped:
        assert d.reason


def test_a_run_that_read_erased_content_applies_nothing_and_keeps_nothing_the_model_sent() -> None:
    kept = [Kept(ChangeOp.REMEMBER, "trip", "Ana flies on Friday.", Kind.FACT, Status.ACTIVE,
                 ("u-1",), None)]
    # (a reason may quote what the model sent: "unknown kind 'window'")
    dropped = [Dropped("remember", "seat", "unknown kind 'window'", '{"content": "window"}')]
    assert withhold_erased(kept, dropped, erased=False) == (kept, dropped)
    still, gone = withhold_erased(kept, dropped, erased=True)
    assert still == []
    assert [(d.op, d.key, d.reason, d.proposal) for d in gone] == [
        ("remember", ERASED_WITHHELD, ERASED_SINCE, ""),
        ("remember", ERASED_WITHHELD, ERASED_SINCE, ""),
    ]
