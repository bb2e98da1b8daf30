"""A list-append history checker in the style of Elle (Kingsbury & Alvaro): writers read a list,
append a token of their own with a read-modify-write at the revision they read, and retry on a
conflict; the checker then finds lost, duplicated and phantom appends, reads that are not a
prefix of later reads, and revisions with gaps. Pure: it sees only the recorded history.

It is also the recorder the tests use (`Recorder`), and the client that plays one writer against
a session or an agent's memory (`play`).
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal

Outcome = Literal["ok", "fail", "info"]  # acknowledged; refused for sure (409); unknown


@dataclass(frozen=True)
class Read:
    """A read of `key`: the list it saw and the revision the list was at."""

    key: str
    invoked: float
    completed: float
    values: tuple[str, ...]
    revision: int


@dataclass(frozen=True)
class Append:
    """An attempt to append `value` to `key`, and what the service answered."""

    key: str
    value: str
    invoked: float
    completed: float
    outcome: Outcome
    revision: int | None = None  # the revision the acknowledgement named


@dataclass
class Recorder:
    """The history of many writer threads, with one clock."""

    reads: list[Read] = field(default_factory=list)
    appends: list[Append] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def read(self, event: Read) -> None:
        with self.lock:
            self.reads.append(event)

    def append(self, event: Append) -> None:
        with self.lock:
            self.appends.append(event)


def check(reads: Iterable[Read], appends: Iterable[Append], base: dict[str, int]) -> list[str]:
    """Every anomaly of the history, in words; [] for a valid one. `base[key]` is the revision of
    `key`'s empty list, so each committed append adds exactly one revision after it."""
    by_key_reads: dict[str, list[Read]] = defaultdict(list)
    by_key_appends: dict[str, list[Append]] = defaultdict(list)
    for r in reads:
        by_key_reads[r.key].append(r)
    for a in appends:
        by_key_appends[a.key].append(a)
    problems: list[str] = []
    for key in sorted(set(by_key_reads) | set(by_key_appends)):
        problems += _check_key(key, by_key_reads[key], by_key_appends[key], base.get(key, 0))
    return problems


def _check_key(key: str, reads: list[Read], appends: list[Append], base: int) -> list[str]:
    problems: list[str] = []
    attempted = {a.value for a in appends if a.outcome != "fail"}
    refused = {a.value for a in appends if a.outcome == "fail"} - attempted
    acked = [a for a in appends if a.outcome == "ok"]
    ordered = sorted(reads, key=lambda r: (len(r.values), r.completed))
    for r in reads:
        seen = set()
        for value in r.values:
            if value in seen:
                problems.append(f"{key}: {value} twice in a read: {r.values}")
            seen.add(value)
            if value in refused:
                problems.append(f"{key}: {value} was refused (409) but is read")
            elif value not in attempted:
                problems.append(f"{key}: {value} read but never appended")
        if r.revision != base + len(r.values):
            problems.append(
                f"{key}: a read of {len(r.values)} appends at revision {r.revision} "
                f"(base {base}): revisions with a gap, or a change that is no append")
    # list-append: all reads of a key are prefixes of one another (one total order)
    for shorter, longer in itertools.pairwise(ordered):
        if longer.values[: len(shorter.values)] != shorter.values:
            problems.append(f"{key}: {shorter.values} is not a prefix of {longer.values}")
    # real time: a read that began after another ended sees at least as much
    for earlier in reads:
        for later in reads:
            if earlier.completed < later.invoked and len(later.values) < len(earlier.values):
                problems.append(f"{key}: a later read {later.values} lost {earlier.values}")
    # each acknowledged append is in every read that began after its acknowledgement
    for a in acked:
        for r in reads:
            if a.completed < r.invoked and a.value not in r.values:
                problems.append(f"{key}: acknowledged {a.value} missing from a later read")
    if reads:
        final = max(reads, key=lambda r: (r.completed, len(r.values)))
        for a in acked:
            if final.values.count(a.value) != 1:
                problems.append(f"{key}: acknowledged {a.value} is in the final list "
                                f"{final.values.count(a.value)} times")
    revisions = [a.revision for a in acked if a.revision is not None]
    if len(set(revisions)) != len(revisions):
        problems.append(f"{key}: one revision acknowledged twice: {sorted(revisions)}")
    return problems


# --- one writer against the live service ----------------------------------------------------

PREFIX = "list:"


def values_of(content: str | None) -> tuple[str, ...]:
    """The list kept in one entry's content, `list: a b c`."""
    if not content:
        return ()
    return tuple(content.removeprefix(PREFIX).split())


def content_of(values: tuple[str, ...]) -> str:
    return " ".join((PREFIX, *values))


@dataclass(frozen=True)
class Store:
    """How a writer reads a key's (list, revision) and tries a write at that revision:
    `read(key)` and `write(key, revision_seen, new_content)` answering (status, revision)."""

    read: Callable[[str], tuple[tuple[str, ...], int, object]]
    write: Callable[[str, object, str], tuple[int, int | None]]


def play(store: Store, recorder: Recorder, writer: int, keys: list[str], ops: int,
         retries: int = 200) -> None:
    """Writer `writer`: `ops` read-modify-write appends, each to a key chosen in turn, each
    retried on a 409 until it is acknowledged."""
    for n in range(ops):
        key = keys[(writer + n) % len(keys)]
        value = f"w{writer}-{n}"
        for _ in range(retries):
            invoked = time.monotonic()
            values, revision, seen = store.read(key)
            recorder.read(Read(key, invoked, time.monotonic(), values, revision))
            invoked = time.monotonic()
            status, acked = store.write(key, seen, content_of((*values, value)))
            completed = time.monotonic()
            if status == 200:
                recorder.append(Append(key, value, invoked, completed, "ok", acked))
                break
            outcome: Outcome = "fail" if status == 409 else "info"
            recorder.append(Append(key, value, invoked, completed, outcome))
        else:
            raise AssertionError(f"{value} not acknowledged after {retries} tries")
