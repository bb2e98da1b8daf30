"""A Neo4j Community server that the project runs itself, from Neo4j's own jars on Maven Central.

`start` resolves the jars once (Maven, into a shared cache), writes a small `neo4j.conf` under
the state folder, launches `org.neo4j.server.CommunityEntryPoint`, waits until Bolt answers and
records what it started in a state file (mode 0600) that every later command reads.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

import neo4j
from neo4j.exceptions import AuthError, ServiceUnavailable

from app.config import Settings
from app.errors import SetupError
from app.store.catalog import statement
from app.store.jars import ensure_apoc, ensure_jars, require
from app.store.locks import cache_lock, file_lock

START_TIMEOUT_SECONDS = 90.0
STOP_TIMEOUT_SECONDS = 30.0

# The flags Neo4j's own launcher passes to the JVM (Netty and the page cache need them on 17+).
JVM_FLAGS = (
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+UnlockExperimentalVMOptions",
    "-XX:+TrustFinalNonStaticFields",
    "-XX:+DisableExplicitGC",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Dlog4j2.disable.jmx=true",
    "-Dfile.encoding=UTF-8",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED",
    "--enable-native-access=ALL-UNNAMED",
)


@dataclass(frozen=True)
class LocalServer:
    """What `start` launched: where it listens and how to log in."""

    pid: int
    bolt_port: int
    http_port: int
    user: str
    password: str
    home: str

    @property
    def bolt_uri(self) -> str:
        return f"bolt://127.0.0.1:{self.bolt_port}"

    @property
    def browser_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}/browser/"


def _state_file(settings: Settings) -> Path:
    return settings.state_dir.resolve() / "neo4j" / "state.json"


def _home(settings: Settings) -> Path:
    return settings.state_dir.resolve() / "neo4j"


def _java() -> str:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").exists():
        return str(Path(java_home) / "bin" / "java")
    return require("java", "install Java 17 (e.g. `apt-get install openjdk-17-jre-headless`)")


# What the local Neo4j may see of our environment: where Java and the user's files are, the
# locale and time zone. Never the rest (OPENAI_API_KEY, NEO4J_PASSWORD, tokens, ...): the JVM,
# its logs and any plugin could read them, and it needs none (its home and config are flags).
SERVER_ENVIRONMENT = frozenset({"PATH", "JAVA_HOME", "HOME", "LANG", "LANGUAGE", "TZ", "TMPDIR"})


def server_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment the local Neo4j is started with: SERVER_ENVIRONMENT and LC_* only."""
    return {
        name: value for name, value in environ.items()
        if name in SERVER_ENVIRONMENT or name.startswith("LC_")
    }


def _plugins(settings: Settings, home: Path) -> Path:
    """The server's plugins folder, holding the APOC jar when `neo4j_apoc` asks for it (and
    nothing otherwise: a server started without the opt-in loads no plugin)."""
    plugins = home / "plugins"
    shutil.rmtree(plugins, ignore_errors=True)
    plugins.mkdir(parents=True)
    if settings.neo4j_apoc:
        jar = ensure_apoc(settings)
        shutil.copy2(jar, plugins / jar.name)
    return plugins


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def _free_port(preferred: int) -> int:
    if _port_free(preferred):
        return preferred
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def _runs(server: LocalServer) -> bool:
    """Whether the recorded process runs and is that server: a process id outlives a reboot in
    the state file, and the system may have given it to another process since. The server is
    known by the home folder on its command line; where the command line cannot be read, a
    live process is taken for it."""
    if not _alive(server.pid):
        return False
    home = f"--home-dir={server.home}"
    try:
        words = Path(f"/proc/{server.pid}/cmdline").read_bytes().split(b"\0")
        return home in [word.decode(errors="replace") for word in words]
    except OSError:  # no /proc: ask ps, whose line joins the words with spaces (a home's too)
        try:
            found = subprocess.run(
                ["ps", "-ww", "-o", "args=", "-p", str(server.pid)],
                capture_output=True, text=True, timeout=10, check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return True
        return f"{home} --config-dir=" in found.stdout


def read_state(settings: Settings) -> LocalServer | None:
    """The server recorded in the state file, if any (running or not); a file that is not one
    `start` wrote is a SetupError naming it."""
    path = _state_file(settings)
    if not path.exists():
        return None
    try:
        return LocalServer(**json.loads(path.read_text()))
    except (ValueError, TypeError, UnicodeDecodeError) as exc:
        raise SetupError(
            f"{path} is not the state `neo4j start` writes: stop the Neo4j of "
            f"{path.parent} by hand if one runs, then remove that folder to start anew (its "
            "data is locked with the password the file held, and goes with it)"
        ) from exc


def _write_state(settings: Settings, server: LocalServer) -> None:
    """Write the state file whole or not at all (a temporary file renamed over it), readable
    by its owner only: it holds the password."""
    path = _state_file(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        json.dump(asdict(server), out)
        out.flush()
        os.fsync(out.fileno())  # on disk before it takes the state file's name
    os.chmod(partial, 0o600)
    os.replace(partial, path)


def _write_conf(home: Path, bolt_port: int, http_port: int, apoc: bool = False) -> None:
    conf = home / "conf"
    conf.mkdir(parents=True, exist_ok=True)
    (conf / "neo4j.conf").write_text(
        "\n".join(
            [
                "server.default_listen_address=127.0.0.1",
                "server.default_advertised_address=127.0.0.1",
                f"server.bolt.listen_address=127.0.0.1:{bolt_port}",
                f"server.bolt.advertised_address=127.0.0.1:{bolt_port}",
                f"server.http.listen_address=127.0.0.1:{http_port}",
                f"server.http.advertised_address=127.0.0.1:{http_port}",
                "server.https.enabled=false",
                "server.memory.pagecache.size=64m",
                "server.memory.heap.max_size=512m",
                "dbms.usage_report.enabled=false",
                "dbms.security.auth_enabled=true",
                f"server.directories.data={home / 'data'}",
                f"server.directories.logs={home / 'logs'}",
                f"server.directories.run={home / 'run'}",
                f"server.directories.plugins={home / 'plugins'}",
                *(["dbms.security.procedures.unrestricted=apoc.*"] if apoc else []),
                "",
            ]
        )
    )


def _log_tail(home: Path, lines: int = 20) -> str:
    chunks: list[str] = []
    for name in ("console.log", "neo4j.log", "debug.log"):
        path = home / "logs" / name
        if path.exists():
            chunks.extend(path.read_text(errors="replace").splitlines()[-lines:])
    return "\n".join(chunks[-lines:]) or "(the log is empty)"


def _bolt_answers(uri: str, auth: tuple[str, str]) -> bool:
    try:
        with neo4j.GraphDatabase.driver(uri, auth=auth, connection_timeout=2) as driver:
            driver.verify_connectivity()
    except AuthError:
        return True  # it answers; the credentials are the caller's concern
    except (ServiceUnavailable, OSError):
        return False
    return True


def _http_answers(port: int) -> bool:
    """Whether the HTTP connector (Neo4j Browser) accepts connections yet: it may open a little
    after Bolt, and `status` hands its URL to people."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return True
    except OSError:
        return False


def _ready(server: LocalServer, auth: tuple[str, str]) -> bool:
    # HTTP first: Bolt is tried (a login, refused until the first password is set) only once
    # both listen, so a slow HTTP connector never makes Neo4j rate-limit our logins.
    return _http_answers(server.http_port) and _bolt_answers(server.bolt_uri, auth)


def _set_initial_password(uri: str, password: str) -> None:
    """Neo4j starts with neo4j/neo4j and demands a change before anything else."""
    with (
        neo4j.GraphDatabase.driver(uri, auth=("neo4j", "neo4j")) as driver,
        contextlib.suppress(AuthError),  # already changed by an earlier start
    ):
        driver.execute_query(
            statement("set_initial_password"),
            old="neo4j",
            new=password,
            database_="system",
        )


def status(settings: Settings) -> LocalServer | None:
    """The running local server, or None when none runs."""
    server = read_state(settings)
    if server is None or not _runs(server):
        return None
    return server


def _await_running(server: LocalServer) -> bool:
    """Wait for a recorded, live server's Bolt: True once it answers, False if it exits first."""
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while not _ready(server, (server.user, server.password)):
        if not _alive(server.pid):
            _reap(server.pid)
            return False
        if time.monotonic() > deadline:
            raise SetupError(
                f"Neo4j (pid {server.pid}) runs but did not answer on {server.bolt_uri} within "
                f"{START_TIMEOUT_SECONDS:.0f}s; see {Path(server.home) / 'logs'} or run "
                "`openbot-memory neo4j stop` and start again."
            )
        time.sleep(0.25)
    return True


def start(settings: Settings) -> LocalServer:
    """Start the local Neo4j, or reuse the one already running. Waits until Bolt answers.

    Starters of the same state folder take turns (an exclusive lock), so two commands starting
    at once never launch two servers on one data folder: the second reuses the first's.
    """
    home = _home(settings)
    # One starter at a time per state folder: a second waits, then reuses the first's server.
    with file_lock(home / "start.lock"):
        return _start_locked(settings, home)


def _start_locked(settings: Settings, home: Path) -> LocalServer:
    running = status(settings)
    if running is not None:
        _check_plugins(settings, home)
        if _bolt_answers(running.bolt_uri, (running.user, running.password)):
            return running
        # Alive but not answering yet (e.g. a starter that died while waiting): wait, never
        # spawn a second server on the same data folder.
        if _await_running(running):
            _set_initial_password(running.bolt_uri, running.password)
            return running
    java = _java()
    lib = ensure_jars(settings)
    (home / "logs").mkdir(parents=True, exist_ok=True)
    previous = read_state(settings)
    password = previous.password if previous else secrets.token_urlsafe(18)
    # A port found free here is taken only once the server listens: until then another state
    # folder's starter must not find it free too (the two would share, and one's login fail).
    with cache_lock(settings, "ports"):
        server = _spawn(settings, home, java, lib, password, previous)
    _set_initial_password(server.bolt_uri, password)
    return server


def _spawn(
    settings: Settings, home: Path, java: str, lib: Path, password: str,
    previous: LocalServer | None,
) -> LocalServer:
    """Start the server on free ports (its last ones when free) and wait until Bolt answers."""
    bolt_port = _free_port(previous.bolt_port if previous else 7687)
    http_port = _free_port(previous.http_port if previous else 7474)
    if http_port == bolt_port:
        http_port = _free_port(0)
    _write_conf(home, bolt_port, http_port, settings.neo4j_apoc)
    plugins = _plugins(settings, home)
    console = home / "logs" / "console.log"
    # posix_spawn, not Popen: the server outlives this process and nothing here waits on it.
    pid = os.posix_spawn(
        java,
        [
            java, "-Xms128m", "-Xmx512m", *JVM_FLAGS, "-cp", f"{lib}/*:{plugins}/*",
            "org.neo4j.server.CommunityEntryPoint",
            f"--home-dir={home}", f"--config-dir={home / 'conf'}",
        ],
        server_environment(os.environ),
        file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, str(console), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600),
            (os.POSIX_SPAWN_DUP2, 1, 2),
        ],
        setsid=True,
    )
    server = LocalServer(pid, bolt_port, http_port, "neo4j", password, str(home))
    _write_state(settings, server)
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while not _ready(server, ("neo4j", password)):
        if not _alive(pid):
            _reap(pid)
            raise SetupError(
                "Neo4j exited before Bolt answered. "
                f"Log tail ({home / 'logs'}):\n{_log_tail(home)}"
            )
        if time.monotonic() > deadline:
            _terminate(pid)
            raise SetupError(
                f"Neo4j did not answer on {server.bolt_uri} within {START_TIMEOUT_SECONDS:.0f}s. "
                f"Log tail ({home / 'logs'}):\n{_log_tail(home)}"
            )
        time.sleep(0.25)
    return server


def _check_plugins(settings: Settings, home: Path) -> None:
    """A running server is reused only if it has APOC when asked for: it is loaded at start."""
    if settings.neo4j_apoc and not any((home / "plugins").glob("apoc-core-*.jar")):
        raise SetupError(
            "the local Neo4j runs without APOC, which OPENBOT_MEMORY_NEO4J_APOC asks for: "
            "run `openbot-memory neo4j stop` and start it again."
        )


def _reap(pid: int) -> None:
    """Collect the exit status of a server this process started (no zombie left behind)."""
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def _terminate(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if _alive(pid):
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        while _alive(pid):
            time.sleep(0.1)
    _reap(pid)


def stop(settings: Settings) -> bool:
    """Stop the local Neo4j cleanly (SIGTERM, then SIGKILL after 30 s). False if none ran."""
    server = read_state(settings)
    if server is None or not _runs(server):
        return False
    _terminate(server.pid)
    return True
