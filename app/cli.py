"""`openbot-memory`: serve, manage the local Neo4j, create tokens, export the schema, and
export or import one org."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import os
import signal
import socket
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from app.config import Settings
from app.errors import ServiceError, SetupError
from app.store import local_server
from app.store.database import Database, Target, resolve_target


def _listen(host: str, port: int) -> list[socket.socket]:
    """Listening sockets on the host's addresses, all on one port: the given one, or under
    `--port 0` the free one the system chose for the first address. They stay open until
    uvicorn serves on them, so no other process takes the port in between, and a client
    connecting once the GraphiQL line is printed waits for an answer instead of being
    refused. An address this machine cannot listen on (`localhost`'s `::1` where IPv6 is off)
    is passed over, as asyncio passes it over, while another one listens."""
    shown = f"[{host}]" if ":" in host else host  # an IPv6 address, as a URL writes it
    sockets: list[socket.socket] = []
    failed: OSError | None = None
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        for family, address in dict.fromkeys((f[0], f[4]) for f in found):
            try:
                sock = socket.socket(family, socket.SOCK_STREAM)
            except OSError as exc:  # a family this machine lacks
                failed = failed or exc
                continue
            try:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                if family == socket.AF_INET6:  # the host's IPv4 address is a socket of its own
                    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                sock.bind((address[0], port, *address[2:]))
                sock.listen(2048)  # uvicorn's default backlog
            except OSError as exc:
                sock.close()
                if exc.errno not in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT):
                    raise
                failed = failed or exc
                continue
            sockets.append(sock)
            port = sock.getsockname()[1]  # --port 0: the free port the system chose
        if not sockets:
            raise failed or OSError(errno.EADDRNOTAVAIL, "no address to listen on")
    except OSError as exc:
        for sock in sockets:
            sock.close()
        what = {
            errno.EADDRINUSE: "--port with a free port",
            errno.EACCES: "--port with a port above 1023",
        }.get(exc.errno or 0, "--host with a name or address of this machine")
        raise SetupError(f"cannot listen on {shown}:{port} ({exc.strerror}): pass {what}") from exc
    return sockets


def _serve(settings: Settings, host: str, port: int) -> None:
    import uvicorn
    from uvicorn.config import STARTUP_FAILURE

    from app.api.app import create_app
    from app.telemetry import exporter_names

    exporter_names()  # a tracing setting it cannot follow is told before anything starts
    sockets = _listen(host, port)
    port = sockets[0].getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    try:
        target = resolve_target(settings)
        if not settings.neo4j_uri:
            server = local_server.status(settings)
            if server is not None:
                print(f"Neo4j (local): {server.bolt_uri}, Browser at {server.browser_url}")
        asyncio.run(_check_connection(target))
        print(f"GraphiQL: http://{shown}:{port}/graphql")
        from app.logs import configure

        configure(settings)  # uvicorn's loggers too; the app writes one line per request itself
        config = uvicorn.Config(
            create_app(settings, target), log_config=None, access_log=False,
            ws_max_size=settings.max_body_bytes,  # a GraphQL document sent by socket, as by POST
        )
        serving = uvicorn.Server(config)
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C: uvicorn has shut down
            serving.run(sockets=sockets)
        if not serving.started:  # the app's startup failed, and uvicorn logged why
            sys.exit(STARTUP_FAILURE)
    finally:
        for sock in sockets:
            sock.close()


async def _check_connection(target: Target) -> None:
    db = await Database.connect(target)
    await db.close()


async def _create_token(
    settings: Settings, org: str, person: str | None, service: str | None = None,
    expires_days: float | None = None,
) -> str:
    from app.memory.access.tokens import Tokens

    db = await Database.connect(resolve_target(settings))
    try:
        await db.apply_schema()
        return await Tokens(db, settings.default_model).create(
            org, person, service, expires_days
        )
    finally:
        await db.close()


def _when(ms: int | None) -> str:
    if ms is None:
        return "-"
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ms / 1000))


async def _tokens(settings: Settings, action: str, subject: str) -> str:
    """`token list --org ORG` (a table, never a token) or `token revoke TOKEN_OR_ID`."""
    from app.memory.access.tokens import Tokens

    db = await Database.connect(resolve_target(settings))
    try:
        await db.apply_schema()
        tokens = Tokens(db, settings.default_model)
        if action == "revoke":
            return f"revoked {await tokens.revoke(subject)}"
        lines = ["id                kind     name             created               "
                 "last used             expires               revoked"]
        for t in await tokens.of_org(subject):
            lines.append(
                f"{t.id:<17} {t.kind:<8} {t.name:<16} {_when(t.created_at):<21} "
                f"{_when(t.last_used_at):<21} {_when(t.expires_at):<21} {_when(t.revoked_at)}"
            )
        return "\n".join(lines)
    finally:
        await db.close()


def _neo4j(settings: Settings, action: str) -> None:
    if action == "start":
        server = local_server.start(settings)
        print(f"Neo4j is running (pid {server.pid}) at {server.bolt_uri}")
        _print_login(server)
    elif action == "stop":
        stopped = local_server.stop(settings)
        print("Neo4j stopped." if stopped else "Neo4j was not running.")
    else:
        running = local_server.status(settings)
        if running is None:
            print("Neo4j is not running. Start it with `openbot-memory neo4j start`.")
            raise SystemExit(3)
        print(f"Neo4j is running (pid {running.pid}) at {running.bolt_uri}")
        _print_login(running)


def _print_login(server: local_server.LocalServer) -> None:
    print(f"Neo4j Browser: {server.browser_url}")
    print(f"  connect URL: {server.bolt_uri}")
    print(f"  user:        {server.user}")
    print(f"  password:    {server.password}")


def _progress(what: str) -> Progress:
    """A progress bar on stderr (rich), quiet when stderr is not a terminal."""
    return Progress(
        TextColumn(what), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=Console(stderr=True), disable=not sys.stderr.isatty(), transient=False,
    )


async def _export(settings: Settings, org: str, out: Path | None) -> None:
    from app.store.backup import export_org

    db = await Database.connect(resolve_target(settings))
    try:
        with _progress(f"export {org}") as bar:
            task = bar.add_task("records", total=None)
            counts = await export_org(db, org, out, lambda n: bar.advance(task, n))
    finally:
        await db.close()
    where = out if out is not None else "stdout"
    print(f"exported {counts.nodes} nodes and {counts.relationships} relationships of {org} "
          f"to {where}", file=sys.stderr)


async def _import(settings: Settings, path: Path, org: str | None) -> None:
    from app.memory.access.tokens import check_name
    from app.memory.erasure import keep_missing_marks
    from app.memory.sessions.history import keep_missing_states
    from app.store.backup import import_org, read_header

    header = read_header(path)
    total = int(header["nodes"]) + int(header["relationships"])
    # the org's name as `token create` takes it, before anything connects: a name no token
    # could be made for would leave an org no one can use
    target = check_name(str(header["org"]) if org is None else org, "org")
    db = await Database.connect(resolve_target(settings))
    try:
        with _progress(f"import into {target}") as bar:
            check = bar.add_task("checked", total=total)
            task = bar.add_task("records", total=total)
            counts = await import_org(db, path, target, lambda n: bar.advance(task, n),
                                      checked=lambda n: bar.advance(check, n))
        await keep_missing_states(db)  # an export made before the head's state was kept
        await keep_missing_marks(db)  # or before the erasure kept its marks
    finally:
        await db.close()
    print(f"imported {counts.nodes} nodes and {counts.relationships} relationships into "
          f"{target}", file=sys.stderr)


async def _erase(settings: Settings, org: str, person: str) -> str:
    """`erase --org ORG --person PERSON`: the person's erasure, as a service token asks it,
    with a progress bar of its session and agent parts."""
    from app.memory.erasure import Erasures

    db = await Database.connect(resolve_target(settings))
    try:
        await db.apply_schema()
        with _progress(f"erase {person} of {org}") as bar:
            task = bar.add_task("parts", total=None)
            erasure = await Erasures(db).erase(org, person, None, lambda n: bar.advance(task, n))
    finally:
        await db.close()
    c = erasure.counts
    return (f"erased {person} of {org} ({erasure.id}): {c.sessions} sessions, {c.items} items, "
            f"{c.entries} entries, {c.agent_entries} agent entries, {c.changes} changes, "
            f"{c.jobs} jobs")


async def _delete_org(settings: Settings, org: str) -> str:
    """`org delete --org ORG`: every node of the org, in batches, with a progress bar."""
    from app.memory.access.orgs import delete_org

    db = await Database.connect(resolve_target(settings))
    try:
        with _progress(f"delete {org}") as bar:
            task = bar.add_task("nodes", total=None)
            deleted = await delete_org(db, org, lambda n: bar.advance(task, n))
    finally:
        await db.close()
    return f"deleted {deleted} nodes of {org}"


def _confirmed(org: str) -> bool:
    """Whether the operator typed the org's name to confirm its deletion."""
    try:
        answer = input(f"This removes every node of org {org!r} for good. "
                       f"Type the org's name to go on: ")
    except EOFError:
        return False
    return answer.strip() == org


def _port(text: str) -> int:
    if not text.isascii() or not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"{text} is not a port (0 to 65535)")
    return int(text)


def _days(text: str) -> float:
    from app.memory.access.tokens import check_expires

    try:
        days = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text} is not a number of days") from None
    try:
        return check_expires(days)
    except ServiceError as exc:
        raise argparse.ArgumentTypeError(f"{text}: {exc.message}") from None


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="openbot-memory", description=__doc__)
    commands = root.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve REST and GraphQL")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=_port, default=8000)
    neo4j = commands.add_parser("neo4j", help="the local Neo4j server")
    neo4j.add_argument("action", choices=["start", "stop", "status"])
    token = commands.add_parser("token", help="bearer tokens")
    token_actions = token.add_subparsers(dest="action", required=True)
    create = token_actions.add_parser("create", help="create a token (and the org and person)")
    create.add_argument("--org", required=True)
    who = create.add_mutually_exclusive_group(required=True)
    who.add_argument("--person", help="a member of the org (created when new)")
    who.add_argument("--service", help="an org-level service token that acts for no person")
    create.add_argument("--expires", type=_days, metavar="DAYS",
                        help="refuse the token this many days from now (default: never)")
    listing = token_actions.add_parser("list", help="an org's tokens (ids, never the tokens)")
    listing.add_argument("--org", required=True)
    revoke = token_actions.add_parser("revoke", help="revoke a token, by itself or its id")
    revoke.add_argument("token", metavar="TOKEN_OR_ID")
    commands.add_parser("schema", help="print the GraphQL schema (SDL)")
    export = commands.add_parser("export", help="write one org's whole record as JSON Lines")
    export.add_argument("--org", required=True)
    export.add_argument("--out", type=Path, help="the file to write (default: stdout)")
    restore = commands.add_parser(
        "import", help="read an export into a new org (or finish this file's interrupted import)"
    )
    restore.add_argument("file", type=Path)
    restore.add_argument("--org", help="the org to create (default: the exported org's name)")
    erase = commands.add_parser(
        "erase", help="erase a person's data everywhere it went (their id becomes opaque)"
    )
    erase.add_argument("--org", required=True)
    erase.add_argument("--person", required=True)
    orgs = commands.add_parser("org", help="whole orgs")
    org_actions = orgs.add_subparsers(dest="action", required=True)
    delete = org_actions.add_parser(
        "delete", help="remove every node of an org, in batches (resumable)"
    )
    delete.add_argument("--org", required=True)
    delete.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    return root


def _check_names(args: argparse.Namespace) -> None:
    """The names a command is given (`--org`, `--person`, `--service`, a token), checked before
    anything connects, so a bad one is told at once: a name to create (`token create`, an
    org to list the tokens of) by the rules of names; one that names what may already be
    there (a person to erase, an org to export or delete) only as text, since an org or person
    imported or made before a rule holds its name."""
    from app.memory.access.tokens import check_name, check_person_name, check_text_argument

    creates = args.command == "token"
    for field in ("org", "service", "person", "token"):
        value = getattr(args, field, None)
        if value is None:
            continue
        if field == "person" and creates:
            check_person_name(value)  # a new person's name is none an erasure gives
        elif field in ("org", "service") and creates:
            check_name(value, field)
        else:
            check_text_argument(value, field)


def main(argv: Sequence[str] | None = None) -> None:
    args = parser().parse_args(argv)
    try:
        _check_names(args)
        settings = Settings.from_environment()
        if args.command == "serve":
            _serve(settings, args.host, args.port)
        elif args.command == "neo4j":
            _neo4j(settings, args.action)
        elif args.command == "token":
            if args.action == "create":
                print(asyncio.run(_create_token(
                    settings, args.org, args.person, args.service, args.expires
                )))
            else:
                subject = args.org if args.action == "list" else args.token
                print(asyncio.run(_tokens(settings, args.action, subject)))
        elif args.command == "schema":
            from app.api.graphql import export_schema

            sys.stdout.write(export_schema())
        elif args.command == "export":
            asyncio.run(_export(settings, args.org, args.out))
        elif args.command == "import":
            asyncio.run(_import(settings, args.file, args.org))
        elif args.command == "org":
            if not args.yes and not _confirmed(args.org):
                print("openbot-memory: nothing deleted", file=sys.stderr)
                raise SystemExit(1)
            print(asyncio.run(_delete_org(settings, args.org)))
        elif args.command == "erase":
            print(asyncio.run(_erase(settings, args.org, args.person)))
    except (SetupError, ServiceError) as exc:
        message = exc.message if isinstance(exc, ServiceError) else str(exc)
        print(f"openbot-memory: error: {message}", file=sys.stderr)
        raise SystemExit(1) from None
    except KeyboardInterrupt:
        raise SystemExit(130) from None
    except BrokenPipeError:
        # the reader of stdout went away (`export | head`): nothing more is said to it, and
        # the exit status is a pipe's closed under a writer's (128 + SIGPIPE)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(128 + signal.SIGPIPE) from None
