"""Clients of the real service under test (tests/conftest.py's `server`), for ana of acme."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from openbot_memory_client import OpenBotMemory

from tests.conftest import RunningServer


@pytest.fixture
def ana_token(tokens: Callable[[str, str], str]) -> str:
    return tokens("acme", "ana")


@pytest.fixture
def client(server: RunningServer, ana_token: str) -> Iterator[OpenBotMemory]:
    with OpenBotMemory(server.url, ana_token) as made:
        yield made


@pytest.fixture
def clients(server: RunningServer) -> Iterator[Callable[[str], OpenBotMemory]]:
    """More blocking clients of the test server, one per token; closed after the test."""
    made: list[OpenBotMemory] = []

    def make(token: str) -> OpenBotMemory:
        made.append(OpenBotMemory(server.url, token))
        return made[-1]

    yield make
    for one in made:
        one.close()

