"""File locks that order the local Neo4j's starters and fetches across processes (filelock's
`FileLock`: an exclusive `flock` on the file)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from filelock import FileLock

from app.config import Settings


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on `path` (made if missing, and kept) while inside; a second
    holder waits."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(path, mode=0o600, preserve_lock_file=True):
        yield


def cache_lock(settings: Settings, name: str) -> AbstractContextManager[None]:
    """One process at a time, across every state folder that shares the jar cache: a fetch
    into the cache (`fetch`), or a server choosing its ports until it listens (`ports`)."""
    return file_lock(settings.jar_cache.expanduser() / f"{name}.lock")
