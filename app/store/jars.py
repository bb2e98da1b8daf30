"""The Neo4j Community jars (and the opt-in APOC core plugin) that the local server runs from,
fetched once with Maven from Maven Central into a shared cache (`settings.jar_cache`)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from app.config import Settings
from app.errors import SetupError
from app.store.locks import cache_lock

NEO4J_VERSION = "5.26.31"
# The APOC core plugin (opt-in, `neo4j_apoc`): Maven coordinates, with the `core` classifier.
APOC_ARTIFACT = "org.neo4j.procedure:apoc-core:5.26.0:jar:core"
POM = Path(__file__).parent / "neo4j" / "pom.xml"


def require(tool: str, why: str) -> str:
    """The path of `tool`, or a SetupError that says `why` it is needed."""
    found = shutil.which(tool)
    if found is None:
        raise SetupError(f"`{tool}` was not found on PATH: {why}")
    return found


def ensure_jars(settings: Settings) -> Path:
    """Resolve the Neo4j and Neo4j Browser jars once; later calls reuse the cache. Two
    processes that start at once fetch them once: the second waits, then reuses them."""
    lib = settings.jar_cache.expanduser() / f"neo4j-{NEO4J_VERSION}" / "lib"
    if (lib / ".complete").exists():
        return lib
    with cache_lock(settings, "fetch"):
        if not (lib / ".complete").exists():
            _fetch_jars(lib)
    return lib


def _fetch_jars(lib: Path) -> None:
    mvn = require("mvn", "install Maven (e.g. `apt-get install maven`) to fetch the Neo4j jars")
    staging = lib.with_name("lib.partial")
    shutil.rmtree(staging, ignore_errors=True)
    print(f"Fetching Neo4j {NEO4J_VERSION} jars from Maven Central (once, about 130 MB)...",
          file=sys.stderr)
    with tempfile.TemporaryFile() as output:
        maven = subprocess.Popen(
            [
                mvn, "-q", "-B", "-f", str(POM), "dependency:copy-dependencies",
                f"-DoutputDirectory={staging}", "-DincludeScope=runtime",
            ],
            stdout=output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        _show_progress(maven, staging)
        output.seek(0)
        text = output.read().decode(errors="replace")
    if maven.returncode != 0:
        tail = "\n".join(text.splitlines()[-15:])
        raise SetupError(f"Maven could not fetch the Neo4j jars:\n{tail}")
    shutil.rmtree(lib, ignore_errors=True)
    staging.rename(lib)
    (lib / ".complete").touch()


def ensure_apoc(settings: Settings) -> Path:
    """The APOC core jar, fetched once with Maven into the jar cache; later calls reuse it."""
    folder = settings.jar_cache.expanduser() / f"apoc-{APOC_ARTIFACT.split(':')[2]}"
    jars = sorted(folder.glob("apoc-core-*.jar"))
    if jars and (folder / ".complete").exists():
        return jars[0]
    with cache_lock(settings, "fetch"):
        return _fetch_apoc(folder)


def _fetch_apoc(folder: Path) -> Path:
    jars = sorted(folder.glob("apoc-core-*.jar"))
    if jars and (folder / ".complete").exists():  # fetched while this one waited
        return jars[0]
    mvn = require("mvn", "install Maven (e.g. `apt-get install maven`) to fetch APOC")
    shutil.rmtree(folder, ignore_errors=True)
    print(f"Fetching {APOC_ARTIFACT} from Maven Central (once, about 3 MB)...", file=sys.stderr)
    fetched = subprocess.run(
        [
            mvn, "-q", "-B", "-f", str(POM), "dependency:copy", f"-Dartifact={APOC_ARTIFACT}",
            f"-DoutputDirectory={folder}",
        ],
        capture_output=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    jars = sorted(folder.glob("apoc-core-*.jar"))
    if fetched.returncode != 0 or not jars:
        tail = "\n".join(fetched.stdout.decode(errors="replace").splitlines()[-15:])
        raise SetupError(f"Maven could not fetch {APOC_ARTIFACT}:\n{tail}")
    (folder / ".complete").touch()
    return jars[0]


def _show_progress(process: subprocess.Popen[bytes], staging: Path) -> None:
    """Elapsed time (and jars copied) on stderr until `process` ends: a line that updates
    itself on a terminal, a line every 15 s in a log."""
    started = time.monotonic()
    tty = sys.stderr.isatty()
    last = 0.0
    while process.poll() is None:
        time.sleep(0.5)
        elapsed = time.monotonic() - started
        if tty or elapsed - last >= 15:
            last = elapsed
            jars = len(list(staging.glob("*.jar"))) if staging.exists() else 0
            line = f"  fetching: {elapsed:4.0f} s, {jars} jars copied"
            sys.stderr.write(f"\r{line}" if tty else f"{line}\n")
            sys.stderr.flush()
    if tty:
        sys.stderr.write("\n")
