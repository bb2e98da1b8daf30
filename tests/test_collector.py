"""The collector's tuning at startup (app.api.app.tune_collector): collections took
about 30% of a process serving nested views, mostly passes over what lives as long as the
process."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from app.api.app import tune_collector
from app.config import Settings


@pytest.fixture
def collector() -> Iterator[None]:
    threshold = gc.get_threshold()
    yield
    gc.set_threshold(*threshold)


def test_the_service_freezes_what_lives_and_collects_young_objects_less_often(
    collector: None,
) -> None:
    assert Settings().gc_threshold == 10_000
    gc.set_threshold(700, 10, 10)
    lives = [["made before the start"]]  # (lists are always tracked)
    tune_collector(10_000)
    assert gc.get_threshold() == (10_000, 10, 10)
    # frozen: no collection passes over it any more
    assert gc.get_freeze_count() > 0
    assert all(tracked is not lives for tracked in gc.get_objects())
    young = [["made after the start"]]
    assert any(tracked is young for tracked in gc.get_objects())


def test_a_threshold_of_zero_leaves_the_collector_as_it_was(collector: None) -> None:
    gc.set_threshold(700, 10, 10)
    lives = [["made before the start"]]
    tune_collector(0)
    assert gc.get_threshold() == (700, 10, 10)
    assert any(tracked is lives for tracked in gc.get_objects())  # not frozen
