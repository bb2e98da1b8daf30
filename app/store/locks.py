"""File locks that order the local Neo4j's starters and fetches across processes."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from app.config import Settings


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on `path` (made if missing) while inside; a second holder waits."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def cache_lock(settings: Settings, name: str) -> AbstractContextManager[None]:
    """One process at a time, across every state folder that shares the jar cache: a fetch
    into the cache (`fetch`), or a server choosing its ports until it listens (`ports`)."""
    return file_lock(settings.jar_cache.expanduser() / f"{name}.lock")
