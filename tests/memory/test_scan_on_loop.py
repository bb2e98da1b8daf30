"""S10's scan of a Remember runs on the event loop where it is short, and in a thread where it
is long enough to hold other requests up (`commands.scanned`)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from app.errors import ValidationError
from app.memory.changes.commands import SCAN_ON_LOOP, Remember, check_remember, scanned


def where(length: int) -> threading.Thread:
    async def run() -> threading.Thread:
        return await scanned(threading.current_thread, length)

    return asyncio.run(run())


def test_a_short_scan_runs_on_the_event_loop() -> None:
    assert where(SCAN_ON_LOOP) is threading.main_thread()


def test_a_long_scan_runs_in_a_thread() -> None:
    assert where(SCAN_ON_LOOP + 1) is not threading.main_thread()


@pytest.mark.parametrize("length", [40, SCAN_ON_LOOP * 4])
def test_a_credential_is_refused_on_either_side(length: int) -> None:  # S10
    content = ("Ana's api key is sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c " * 100)[:length]
    command = Remember(key="access", content=content, kind="fact")

    async def run() -> Remember:
        return await scanned(lambda: check_remember(command), len(command.content))

    with pytest.raises(ValidationError) as refused:
        asyncio.run(run())
    assert refused.value.field == "content"
