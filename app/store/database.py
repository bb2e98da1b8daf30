"""The one driver of the process, its transactions, and the schema applied at start."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

import neo4j
from neo4j import AsyncGraphDatabase
from neo4j.exceptions import (
    AuthError,
    ClientError,
    ConnectionPoolError,
    ConstraintError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)
from opentelemetry.trace import SpanKind
from tenacity import (
    AsyncRetrying,
    retry_if_exception,
    retry_if_exception_type,
    stop_after_delay,
    wait_random,
)

from app.config import Settings
from app.errors import SessionConflict, SetupError, Unavailable, ValidationError
from app.logs import request_id
from app.store import local_server
from app.store.catalog import schema_statements, statement
from app.store.causality import INVALID_BOOKMARK, causality
from app.store.plans import Plans
from app.telemetry import Telemetry

T = TypeVar("T")
Record = dict[str, Any]
# What runs a Tx's statements: a write's managed transaction or a read's session.
Statements = neo4j.AsyncManagedTransaction | neo4j.AsyncSession

# While Neo4j is down a request answers 503 within seconds, not after the driver's default
# 30 s of retries: the driver retries a transaction for RETRY_SECONDS, connects within
# CONNECT_SECONDS and waits ACQUIRE_SECONDS for a connection of its pool; then the request is
# `Unavailable` with a Retry-After. Transient errors (deadlocks between writers) are retried
# further here, for up to TRANSIENT_SECONDS, as the driver's default would have.
RETRY_SECONDS = 1.0
# What the driver raises when it has no connection to run on: the database went away (a lost
# connection, a routing table of no server), or every connection of its pool stayed busy for
# ACQUIRE_SECONDS; each is `Unavailable` to the client, who tries again shortly.
UNREACHABLE = (ServiceUnavailable, SessionExpired, ConnectionPoolError)
CONNECT_SECONDS = 3.0
STARTING_SECONDS = 60.0  # how long a database that is not online yet is waited for at start
ACQUIRE_SECONDS = 5.0
TRANSIENT_SECONDS = 30.0
RETRY_AFTER_SECONDS = 5
# Once the database has failed to answer, each operation first asks it a trivial question and
# waits at most this long: Neo4j accepts Bolt connections while it starts, before the database
# can answer, and a request would otherwise block inside it until it can, for many seconds.
PROBE_SECONDS = 2.0
# While Neo4j starts, Bolt accepts connections before the database is ready, and every
# transaction fails with one of these transient codes (the DBMS's, or the database's while it
# recovers). It is no deadlock that a retry soon resolves, so it is not retried for
# TRANSIENT_SECONDS: the request is `Unavailable` at once (the driver has already retried it for
# RETRY_SECONDS).
NOT_READY = frozenset({
    "Neo.TransientError.General.DatabaseUnavailable",
    "Neo.TransientError.Database.DatabaseUnavailable",
    # A cluster member that has not reached a request's bookmark in time (Causality): the
    # client tries again shortly.
    "Neo.TransientError.Transaction.BookmarkTimeout",
})


def _resolves_soon(exc: BaseException) -> bool:
    """A transient error a retry soon resolves (a deadlock between writers): not one of a
    database that is not ready."""
    return isinstance(exc, TransientError) and exc.code not in NOT_READY


def _transient_retries() -> AsyncRetrying:
    """How a transaction that failed transiently runs again: after a short random pause, until
    TRANSIENT_SECONDS have passed; then its last error is raised. (One per operation: a
    retrying object keeps the state of its calls.)"""
    return AsyncRetrying(
        retry=retry_if_exception(_resolves_soon),
        stop=stop_after_delay(TRANSIENT_SECONDS),
        wait=wait_random(0.05, 0.5),
        reraise=True,
    )


def _lost_connection_retries() -> AsyncRetrying:
    """How an auto-commit read that lost its connection runs again: for RETRY_SECONDS."""
    return AsyncRetrying(
        retry=retry_if_exception_type((ServiceUnavailable, SessionExpired)),
        stop=stop_after_delay(RETRY_SECONDS),
        wait=wait_random(0.05, 0.2),
        reraise=True,
    )


def _unavailable() -> Unavailable:
    return Unavailable(
        "the database does not answer now; try again shortly", retry_after=RETRY_AFTER_SECONDS
    )


_SCALARS = (str, int, float, bool, type(None))


class _NotPlain(Exception):
    """A value that `Record.data` must convert (a node, relationship, path, temporal...)."""


def _check_plain(value: Any) -> None:
    """Raise `_NotPlain` unless `value` is a scalar, or maps and lists of them all the way down.
    It only looks: the driver's maps and lists are fresh for each record, so they are kept as
    they are: looking costs a fraction of copying on a large view."""
    kind = type(value)
    if kind is dict:
        inner: Iterable[Any] = value.values()
    elif kind is list:
        inner = value
    elif isinstance(value, _SCALARS):
        return
    else:
        raise _NotPlain
    for item in inner:
        if type(item) not in _SCALARS:  # the common case, without a call
            _check_plain(item)


def plain_record(record: neo4j.Record) -> dict[str, Any]:
    """A record as `Record.data()` gives it, the fast way for what our statements return (maps,
    lists and scalars): `data()` converts each value through a generic call, which a view of
    thousands of values pays thousands of times."""
    row = _as_given(record)
    try:
        _check_plain(row)
    except _NotPlain:
        return record.data()
    return row


def _as_given(record: neo4j.Record) -> dict[str, Any]:
    return dict(zip(record.keys(), record, strict=True))


_uncounted: ContextVar[bool] = ContextVar("uncounted", default=False)

@contextmanager
def uncounted() -> Iterator[None]:
    """Statements run inside are left out of `Database.statements`: authentication's (a token's
    lookup is cached, so counting it would make a request's cost depend on the clock) and a
    metrics scrape's."""
    token = _uncounted.set(True)
    try:
        yield
    finally:
        _uncounted.reset(token)


class Tx:
    """A transaction that runs catalog statements by name, with parameters only: a write's
    managed transaction, or for a read its session, where each statement is a transaction of
    its own (see `Database.read`)."""

    def __init__(self, tx: Statements, db: Database) -> None:
        self._tx = tx
        self._db = db

    def _count(self) -> None:
        if request_id.get() is not None and not _uncounted.get():
            self._db.statements += 1

    async def rows(self, name: str, **params: Any) -> list[Record]:
        return await self._rows(name, plain_record, params)

    async def plain_rows(self, name: str, **params: Any) -> list[Record]:
        """The rows of a statement whose columns are lists, maps and scalars by construction
        (map projections and lists of properties, never a node, a path or a temporal value),
        taken as the driver gives them: for the largest answers (a session's whole view),
        where looking through every value costs more than the rest of the row's reading."""
        return await self._rows(name, _as_given, params)

    async def _rows(
        self, name: str, plain: Callable[[neo4j.Record], Record], params: dict[str, Any]
    ) -> list[Record]:
        self._count()
        # A span per statement, named by its file; parameter values never go into a trace.
        with self._db.telemetry.tracer.start_as_current_span(
            name, kind=SpanKind.CLIENT, attributes={"db.system.name": "neo4j"}
        ):
            try:
                result = await self._tx.run(self._db.plans.text(name), params)
                return [plain(record) async for record in result]
            except ClientError as exc:
                error = query_syntax_error(exc, params.get("query"))
                if error is None:
                    raise
                raise error from exc

    async def stream(self, name: str, **params: Any) -> AsyncIterator[Record]:
        """The rows of a statement one at a time, for answers too big to hold (exports)."""
        self._count()
        result = await self._tx.run(self._db.plans.text(name), params)
        async for record in result:
            yield record.data()

    async def row(self, name: str, **params: Any) -> Record | None:
        rows = await self.rows(name, **params)
        return rows[0] if rows else None


async def settled_list(
    ids_of: Callable[[], Awaitable[list[str]]],
    find: Callable[[list[str]], Awaitable[dict[str, T]]],
) -> list[T]:
    """A list of jobs whose members end by queuing the next one (a backlog run, a learning job),
    read until two reads in a row agree, ids and members both. Neo4j reads are read-committed,
    even within one transaction: ids read before a member ended miss the job it queued, and a
    member read while a commit lands may be seen ended before what it read. Reading again
    until nothing changed means a member seen ended comes with all its commit wrote."""
    ids = await ids_of()
    found = await find(ids)
    while True:
        again = await ids_of()
        check = await find(again)
        if again == ids and check == found:
            return [check[i] for i in again if i in check]
        ids, found = again, check


async def read_whole(
    fetch: Callable[[list[str]], Awaitable[list[dict[str, Any]]]],
    ids: Sequence[str],
    key: Callable[[dict[str, Any]], str],
    settled: Callable[[dict[str, Any]], bool],
) -> list[dict[str, Any]]:
    """Rows of one statement that reads, per row, a counter every write grows (a session's
    revision, an agent memory's version) first and again last: a row whose two differ was read
    while a write committed (reads are read-committed even within one statement), so its ids
    are read again, until every row was read whole between two commits."""
    rows = await fetch(list(ids))
    whole = [row for row in rows if settled(row)]
    if len(whole) == len(rows):
        return rows
    done = {key(row) for row in whole}
    moved = [key(row) for row in rows if key(row) not in done]
    return whole + await read_whole(fetch, moved, key, settled)


SEARCH_QUERY_FAILED = "Neo.ClientError.Procedure.ProcedureCallFailed"
LUCENE_PARSE = re.compile(r"Cannot parse '.*?': (.*?)(?:\n|$)", re.DOTALL)
# A term Lucene cannot build (a /regular expression/ or a wildcard past the states it builds
# of one, a boost past the largest float) fails past its parser, as an exception the full-text
# procedure passes on. An index being made again (at a start) is missing for a moment, and
# fails with an IllegalArgumentException too, which is not the query's fault. A query whose
# fuzzy, wildcard or prefix terms expand to more index terms than Lucene runs in one query fails
# as TooManyClauses (or TooManyNestedClauses, where they sit under AND).
MISSING_INDEX = "no such fulltext schema index"
LUCENE_REFUSED = re.compile(
    r"db\.index\.fulltext\.query\w*`: Caused by: [\w.$]*"
    r"(?:IllegalArgumentException|TooComplexToDeterminizeException|NumberFormatException"
    r"|(?P<clauses>TooMany(?:Nested)?Clauses)): "
    r"(?P<reason>.*?)(?:\n|$)",
    re.DOTALL,
)


def query_syntax_error(exc: ClientError, query: object = None) -> ValidationError | None:
    """A full-text query (`query`, the statement's `$query`) Lucene cannot parse, or one of
    whose terms it cannot build, as the client's ValidationError on `query`."""
    message = exc.message or ""
    if exc.code != SEARCH_QUERY_FAILED:
        return None
    refused = LUCENE_REFUSED.search(message) if MISSING_INDEX not in message else None
    if refused is not None and refused.group("clauses"):
        reason = (
            "its terms expand to too many terms of the index (fewer fuzzy, wildcard or prefix "
            f"terms, or longer ones, expand to fewer): {refused.group('reason').strip()}"
        )
    elif refused is not None:
        what = (
            "a regular expression in it is not valid"
            if isinstance(query, str) and "/" in query
            else "Lucene cannot build a term of it"
        )
        reason = f"{what}: {refused.group('reason').strip()}"
    elif "parse" in message.lower():
        found = LUCENE_PARSE.search(message)
        reason = found.group(1).strip() if found else "it is not valid Lucene query syntax"
    else:
        return None
    return ValidationError(f"the search query cannot be parsed: {reason}", "query")


FULLTEXT_INDEX = re.compile(r"CREATE FULLTEXT INDEX (\w+) IF NOT EXISTS")
CONFIG_ENTRY = re.compile(r"`([\w.]+)`\s*:\s*(true|false|'[^']*'|-?\d+)")
INDEX_ONLINE_SECONDS = 600  # a full-text index made again is populated from the data first


def _literal(text: str) -> Any:
    if text in ("true", "false"):
        return text == "true"
    if text.startswith("'"):
        return text[1:-1]
    return int(text)


def fulltext_config(text: str) -> tuple[str, dict[str, Any]] | None:
    """The name and the indexConfig entries of a schema statement that makes a full-text
    index (`OPTIONS {indexConfig: {`key`: value}}`); None for any other statement."""
    found = FULLTEXT_INDEX.match(text)
    if found is None:
        return None
    return found.group(1), {key: _literal(value) for key, value in CONFIG_ENTRY.findall(text)}


@dataclass(frozen=True)
class Target:
    """Where the driver connects and as whom."""

    uri: str
    user: str
    password: str
    database: str


def resolve_target(settings: Settings) -> Target:
    """`NEO4J_URI` when set; otherwise start (or reuse) the project's local Neo4j."""
    if settings.neo4j_uri:
        password = settings.neo4j_password.get_secret_value() if settings.neo4j_password else ""
        return Target(settings.neo4j_uri, settings.neo4j_user, password, settings.neo4j_database)
    server = local_server.start(settings)
    return Target(server.bolt_uri, server.user, server.password, "neo4j")


class Database:
    """The process's one driver; `read`/`write` run one public operation as one transaction."""

    def __init__(self, driver: neo4j.AsyncDriver, database: str) -> None:
        self._driver = driver
        self._database = database
        # Statements run so far on behalf of requests (not of background workers, nor of
        # authentication): what requests cost, for tests and bench.
        self.statements = 0
        self.telemetry = Telemetry()  # the app's metrics and tracer; `create_app` sets its own
        # Called after every write transaction that committed: the live views' hub listens.
        self.on_commit: Callable[[], None] = lambda: None
        self._down = False  # the database failed to answer; probe it before the next operation
        # Every session of the process is chained by this: each reads at least what the
        # process's sessions wrote before it began, on a cluster's follower too.
        self._bookmarks = AsyncGraphDatabase.bookmark_manager()
        # What Neo4j plans, and whether a statement keeps its plan (a small graph's).
        self.plans = Plans(driver, database)

    @classmethod
    async def connect(cls, target: Target) -> Database:
        driver = AsyncGraphDatabase.driver(
            target.uri,
            auth=(target.user, target.password),
            connection_timeout=CONNECT_SECONDS,
            max_transaction_retry_time=RETRY_SECONDS,
            connection_acquisition_timeout=ACQUIRE_SECONDS,
            notifications_min_severity="OFF",
        )
        try:
            await driver.verify_connectivity()
        except AuthError as exc:
            await driver.close()
            raise SetupError(
                f"Neo4j at {target.uri} refused the login: check NEO4J_USER and NEO4J_PASSWORD."
            ) from exc
        except (ServiceUnavailable, OSError, ValueError, Neo4jError) as exc:
            await driver.close()
            raise SetupError(
                f"Cannot reach Neo4j at {target.uri} ({exc.__class__.__name__}): check "
                "NEO4J_URI, or unset it to use the project's local Neo4j."
            ) from exc
        db = cls(driver, target.database)
        try:
            await db._answering(target)
            await db.plans.read_size()
        except BaseException:
            await driver.close()
            raise
        return db

    async def _answering(self, target: Target) -> None:
        """Once the target's database answers: Bolt accepts connections before a database is
        online, so one that is not ready yet is asked again for up to STARTING_SECONDS. A
        database the server lacks, or one that stays unavailable, is a SetupError naming it."""
        retries = AsyncRetrying(
            retry=retry_if_exception(
                lambda exc: isinstance(exc, TransientError | ServiceUnavailable | SessionExpired)
            ),
            stop=stop_after_delay(STARTING_SECONDS),
            wait=wait_random(0.2, 1.0),
            reraise=True,
        )
        try:
            async for attempt in retries:
                with attempt:
                    await self._driver.execute_query(statement("ping"), database_=self._database)
        except ClientError as exc:
            if exc.code == "Neo.ClientError.Database.DatabaseNotFound":
                raise SetupError(
                    f"Neo4j at {target.uri} has no database {target.database!r}: "
                    "check NEO4J_DATABASE."
                ) from exc
            raise SetupError(  # the user may not read it, for one
                f"Neo4j at {target.uri} refused a read of database {target.database!r} "
                f"({exc.code}): check NEO4J_USER and NEO4J_DATABASE."
            ) from exc
        except (TransientError, ServiceUnavailable, SessionExpired) as exc:
            why = exc.code if isinstance(exc, Neo4jError) else exc.__class__.__name__
            raise SetupError(
                f"Neo4j at {target.uri} answers, but its database {target.database!r} did not "
                f"within {STARTING_SECONDS:.0f}s ({why})."
            ) from exc

    async def apply_schema(self) -> None:
        """cypher/schema.cypher's constraints and indexes, each made if missing. A full-text
        index the database has with another indexConfig (made by an older schema) is dropped
        and made again, and awaited until it is online over the data it indexes."""
        found, _, _ = await self._driver.execute_query(
            statement("fulltext_indexes"), database_=self._database
        )
        existing = {record["name"]: dict(record["config"] or {}) for record in found}
        for text in schema_statements():
            remade = None
            wanted = fulltext_config(text)
            if wanted is not None:
                name, config = wanted
                have = existing.get(name)
                if have is not None and any(have.get(k) != v for k, v in config.items()):
                    await self._driver.execute_query(
                        statement("drop_index"), {"name": name}, database_=self._database
                    )
                    remade = name
            await self._driver.execute_query(text, database_=self._database)
            if remade is not None:
                await self._driver.execute_query(
                    statement("await_index"), {"name": remade, "seconds": INDEX_ONLINE_SECONDS},
                    database_=self._database,
                )

    async def ping(self) -> bool:
        try:
            await self._driver.execute_query(statement("ping"), database_=self._database)
        except (Neo4jError, *UNREACHABLE, OSError):
            return False
        return True

    async def close(self) -> None:
        await self.plans.close()
        await self._driver.close()

    def _counted(
        self, access: str, work: Callable[[Tx], Awaitable[T]]
    ) -> tuple[
        Callable[[Statements], Awaitable[T]],
        Callable[[], None],
    ]:
        """`work` as the driver runs it, and what to call after: counts the driver's retries."""
        attempts = 0

        def attempt(tx: Statements) -> Awaitable[T]:
            nonlocal attempts
            attempts += 1
            return work(Tx(tx, self))

        def done() -> None:
            if attempts > 1:
                kind = "write" if access.startswith("write") else "read"
                self.telemetry.metrics.neo4j_retries.labels(kind).inc(attempts - 1)

        return attempt, done

    async def read(self, work: Callable[[Tx], Awaitable[T]]) -> T:
        """Run `work`'s statements as reads, each a transaction of its own (auto-commit): one
        round trip per statement, where a transaction costs two more (BEGIN, COMMIT), and
        round trips are most of a small read's time. Neo4j's reads are read-committed even
        within one transaction, so a transaction around several reads would add no
        consistency (each read that must be whole checks it itself: `read_whole`)."""
        return await self._run("read", work)

    async def read_in_one(self, work: Callable[[Tx], Awaitable[T]]) -> T:
        """Run `work`'s reads in one read transaction, for statements that pass on element
        ids (which Neo4j keeps stable only within one transaction): an export's."""
        return await self._run("read_in_one", work)

    async def write(self, work: Callable[[Tx], Awaitable[T]]) -> T:
        """Run `work` as one write transaction; once it committed, tell `on_commit`."""
        return await self._committed("write", work)

    async def write_once(self, work: Callable[[Tx], Awaitable[T]]) -> T:
        """Run `work`'s one statement as a write in an auto-commit transaction: one round trip,
        where `write` costs two more (BEGIN, COMMIT). Only for a statement that is atomic on
        its own (it takes the locks it needs and checks what it must) and writes nothing where
        it cannot apply (it answers no row; the caller then goes on in a `write`). A transient
        error (a deadlock between writers: nothing was written) is retried as `write` retries
        it; a lost connection is not (whether it committed is unknown): it is `Unavailable`.
        Each statement `work` runs is a transaction of its own. Once it committed, tell
        `on_commit`."""
        return await self._committed("write_once", work)

    async def _committed(self, access: str, work: Callable[[Tx], Awaitable[T]]) -> T:
        """A write (`access`) run to its commit, then told to `on_commit`; two writers that
        used the same id are a conflict the client resolves by reading again."""
        try:
            done = await self._run(access, work)
        except ConstraintError as exc:
            raise SessionConflict("a concurrent change used the same id; read again") from exc
        self.on_commit()
        return done

    async def _probe(self) -> None:
        """After a failure, whether the database answers again: `Unavailable` (503) unless it
        does within PROBE_SECONDS. Costs nothing while the database is up."""
        if not self._down:
            return
        try:
            async with asyncio.timeout(PROBE_SECONDS):
                await self._driver.execute_query(statement("ping"), database_=self._database)
        except (TimeoutError, *UNREACHABLE, TransientError) as exc:
            raise _unavailable() from exc
        self._down = False

    async def _run(self, access: str, work: Callable[[Tx], Awaitable[T]]) -> T:
        await self._probe()
        try:
            return await self._attempts(access, work)
        except Unavailable as exc:
            # a pool whose connections are all busy is a database that answers: no probe
            # before the next operation, which would ask the same pool for one more
            if not isinstance(exc.__cause__, ConnectionPoolError):
                self._down = True
            raise

    async def _attempts(self, access: str, work: Callable[[Tx], Awaitable[T]]) -> T:
        attempt, done = self._counted(access, work)
        mode = neo4j.WRITE_ACCESS if access.startswith("write") else neo4j.READ_ACCESS
        causal = causality.get()
        async with self._driver.session(
            database=self._database, default_access_mode=mode,
            bookmarks=causal.bookmarks() if causal is not None else None,
            bookmark_manager=self._bookmarks,
        ) as session:

            async def once() -> T:
                if access == "write":
                    return await session.execute_write(attempt)
                if access == "read_in_one":
                    return await session.execute_read(attempt)
                if access == "write_once":
                    return await attempt(session)
                return await self._auto_commit(session, attempt)

            try:
                try:
                    answer = await once()  # most operations succeed at once: no retry state
                except TransientError as exc:
                    if not _resolves_soon(exc):
                        raise
                    answer = await _transient_retries()(once)
                if access.startswith("write") and causal is not None:
                    causal.made = tuple(sorted((await session.last_bookmarks()).raw_values))
                return answer
            except ClientError as exc:
                if causal is not None and exc.code in INVALID_BOOKMARK:
                    raise ValidationError(
                        "not a bookmark this service gave", causal.field) from exc
                raise
            except TransientError as exc:
                if exc.code in NOT_READY:
                    raise _unavailable() from exc
                raise
            except UNREACHABLE as exc:
                raise _unavailable() from exc
            finally:
                done()

    async def _auto_commit(
        self,
        session: neo4j.AsyncSession,
        attempt: Callable[[Statements], Awaitable[T]],
    ) -> T:
        """Reads in auto-commit transactions, retried as `execute_read` retries its work: a
        lost connection for RETRY_SECONDS (then the caller answers `Unavailable`)."""

        async def once() -> T:
            return await attempt(session)

        try:
            return await once()  # most reads succeed at once: no retry state
        except (ServiceUnavailable, SessionExpired):
            pass
        return await _lost_connection_retries()(once)

    async def clear(self) -> None:
        """Delete every node (tests start each case from an empty graph)."""
        await self._driver.execute_query(statement("clear_graph"), database_=self._database)

