"""Backup and restore of one org as JSON Lines: a generic dump of the org's part of the graph.

The file (format `openbot-memory-export`, version 1) is a header line, then one line per node,
then one per relationship:

    {"format": "openbot-memory-export", "version": 1, "org": "acme", "exportedAt": <ms>,
     "nodes": N, "relationships": M}
    {"node": "n1", "labels": ["Session"], "properties": {"id": "ses-...", ...}}
    {"relationship": "HEAD", "start": "n1", "end": "n2", "properties": {}}

Node references (`n1`, ...) are the file's own; every property keeps its value, ids included.
Tokens are never part of it. An import reads it in batches, each one transaction that also
moves a checkpoint (an `Import` node of the target org with the file's digest and the records
applied), so an interrupted import run again with the same file continues where it stopped.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from app.errors import SessionConflict, SetupError
from app.store.database import Database, Tx

FORMAT = "openbot-memory-export"
CHANGED = "the file is cut or changed"
VERSION = 1
REFS_PER_READ = 500
# How many times an export is taken again when the org moved while it was read.
EXPORT_ATTEMPTS = 5


def now_ms() -> int:
    return int(time.time() * 1000)

Advance = Callable[[int], None]


class _Moved(Exception):
    """A node read points to one that was not: the org moved while it was read."""


@dataclass(frozen=True)
class Counts:
    nodes: int
    relationships: int


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


async def _export_into(tx: Tx, org: str, out: IO[str], advance: Advance) -> Counts:
    out.seek(0)
    out.truncate()  # the driver may run this again after a transient error
    state = await tx.row("import_state", org=org)
    if state is not None and state["import"] is not None:
        # its nodes are marked as the import's until it ends: no import would take them back
        raise SetupError(
            f"an import into {org!r} is unfinished: run it again to finish it (or delete the "
            f"org with `openbot-memory org delete --org {org}`), then export it"
        )
    refs: dict[str, str] = {}
    async for row in tx.stream("export_org_nodes", org=org):
        ref = refs[row["ref"]] = f"n{len(refs) + 1}"
        out.write(_line({"node": ref, "labels": sorted(row["labels"]),
                         "properties": row["properties"]}))
        advance(1)
    if not refs:
        raise SetupError(f"there is no org {org!r} in this database")
    relationships = 0
    elements = list(refs)
    for start in range(0, len(elements), REFS_PER_READ):
        rows = await tx.rows("export_relationships", refs=elements[start:start + REFS_PER_READ])
        for row in rows:
            end = refs.get(row["end"])
            if end is None:
                # Every node of the org was read, and no relationship leaves the org: a write
                # made this node after they were (a turn's new HEAD, an entry's new CURRENT).
                raise _Moved
            out.write(_line({"relationship": row["type"], "start": refs[row["start"]],
                             "end": end, "properties": row["properties"]}))
            relationships += 1
        advance(len(rows))
    return Counts(len(refs), relationships)


def _check_destination(path: Path) -> None:
    if path.is_dir():
        raise SetupError(f"{path} is a folder: name the file to write")
    if not path.parent.is_dir():
        raise SetupError(f"there is no folder {path.parent}")


async def export_org(db: Database, org: str, path: Path | None, advance: Advance) -> Counts:
    """Write the org's whole record to `path` (stdout when None), in one read transaction; a
    path that cannot be written is refused before anything is read. A read transaction sees
    each write as it commits, so an export during which a write pointed a node read to one
    made after (the org moved) is taken again, a bounded number of times: the file holds
    every relationship between its nodes, or there is no file."""
    if path is not None:
        _check_destination(path)
    with tempfile.TemporaryFile("w+", encoding="utf-8") as body:
        for attempt in range(1, EXPORT_ATTEMPTS + 1):
            try:
                counts = await db.read_in_one(lambda tx: _export_into(tx, org, body, advance))
                break
            except _Moved:
                if attempt == EXPORT_ATTEMPTS:
                    raise SetupError(
                        f"org {org!r} moved while each of {EXPORT_ATTEMPTS} exports read it: "
                        "export it when fewer writes land (or with the service stopped)"
                    ) from None
        header = {"format": FORMAT, "version": VERSION, "org": org, "exportedAt": now_ms(),
                  "nodes": counts.nodes, "relationships": counts.relationships}
        body.seek(0)
        if path is None:
            if isinstance(sys.stdout, io.TextIOWrapper):
                sys.stdout.reconfigure(encoding="utf-8")  # the format's, whatever the locale
            sys.stdout.write(_line(header))
            shutil.copyfileobj(body, sys.stdout)
            sys.stdout.flush()
            return counts
        # A file of this export's own beside `path` (another export to the same path writes
        # its own), readable by its owner only, as it holds the org's memory, renamed over
        # `path` once whole.
        partial: Path | None = None
        replaced = False
        try:
            with tempfile.NamedTemporaryFile(
                "w", encoding="utf-8", dir=path.parent, prefix=f"{path.name}.",
                suffix=".partial", delete=False,
            ) as out:
                partial = Path(out.name)
                out.write(_line(header))
                shutil.copyfileobj(body, out)
            os.replace(partial, path)  # a file at `path` is always a whole export
            replaced = True
        except OSError as exc:
            raise SetupError(f"cannot write {path}: {exc.strerror}") from exc
        finally:
            if not replaced and partial is not None:  # an interrupted write (Ctrl-C too)
                partial.unlink(missing_ok=True)
    return counts


def read_header(path: Path) -> dict[str, Any]:
    try:
        with path.open(encoding="utf-8") as lines:
            first = lines.readline()
    except OSError as exc:
        raise SetupError(f"cannot read {path}: {exc.strerror}") from exc
    except ValueError:  # not UTF-8 text
        first = ""
    try:
        header = json.loads(first)
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise SetupError(f"{path} is not an openbot-memory export")
    if header.get("version") != VERSION:
        raise SetupError(f"{path} is export version {header.get('version')}; this reads {VERSION}")
    if not (isinstance(header.get("org"), str) and _count(header.get("nodes"))
            and _count(header.get("relationships"))):
        raise SetupError(f"{path} is not an openbot-memory export")
    return header


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


# What no export holds: tokens (never exported), an import's own checkpoint and marks.
NOT_EXPORTED = frozenset({"Token", "Import", "Importing"})
INT64 = range(-(2**63), 2**63)


def _is_value(value: object) -> bool:
    """Whether `value` is a property value Neo4j stores: a string, number or boolean, or a
    list of one kind of them."""
    if isinstance(value, list):
        kinds = {type(one) for one in value}
        return len(kinds) <= 1 and all(_is_value(one) and not isinstance(one, list)
                                       for one in value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value in INT64
    return isinstance(value, str | float | bool)


def _is_record(record: object) -> bool:
    """Whether a line holds a node or a relationship as an export writes them: its properties
    values Neo4j stores, a node with labels (none an import's own, and no `importRef`)."""
    if not isinstance(record, dict) or not isinstance(record.get("properties"), dict):
        return False
    properties: dict[str, Any] = record["properties"]
    if not all(isinstance(key, str) and _is_value(value) for key, value in properties.items()):
        return False
    if "node" in record:
        labels = record.get("labels")
        return (isinstance(record["node"], str) and isinstance(labels, list) and bool(labels)
                and all(isinstance(label, str) and label for label in labels)
                and not NOT_EXPORTED & set(labels) and "importRef" not in properties)
    return (all(isinstance(record.get(key), str) for key in ("relationship", "start", "end"))
            and bool(record["relationship"]))


def _records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) for each record of the file, past its header; blank lines are no
    records. A line that is not one is a SetupError."""
    try:
        with path.open(encoding="utf-8") as lines:
            lines.readline()
            for number, line in enumerate(lines, start=2):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except ValueError:
                    record = None
                if not _is_record(record):
                    raise SetupError(f"{path}: line {number} is not a record of an export: "
                                     f"{CHANGED}")
                yield number, record
    except UnicodeDecodeError as exc:
        raise SetupError(f"{path} is not UTF-8 text: {CHANGED}") from exc


def check_export(path: Path, header: dict[str, Any], advance: Advance) -> None:
    """Read the whole file before anything of it is written: every line a record, the nodes
    first, each relationship between nodes that stand before it, and as many of each as its
    header says. A file that is cut or changed is refused whole."""
    refs: set[str] = set()
    relationships = 0
    for number, record in _records(path):
        if "node" in record:
            if relationships or record["node"] in refs:
                raise SetupError(f"{path}: line {number} is not where an export puts it: "
                                 f"{CHANGED}")
            refs.add(record["node"])
        elif record["start"] in refs and record["end"] in refs:
            relationships += 1
        else:
            raise SetupError(f"{path}: line {number} names a node the file does not hold "
                             f"before it: {CHANGED}")
        advance(1)
    held, said = (len(refs), relationships), (header["nodes"], header["relationships"])
    if held != said:
        raise SetupError(f"{path} holds {held[0]} nodes and {held[1]} relationships, its header "
                         f"says {said[0]} and {said[1]}: {CHANGED}")


def _digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as raw:
        for chunk in iter(lambda: raw.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def renamed(record: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    """A node record moved to the org `new`: the org's id and every `org` property."""
    properties = dict(record["properties"])
    if "Org" in record["labels"] and properties.get("id") == old:
        properties["id"] = new
    if properties.get("org") == old:
        properties["org"] = new
    return {**record, "properties": properties}


def _batches(
    path: Path, skip: int, size: int
) -> Iterator[tuple[str, int, list[dict[str, Any]]]]:
    """(kind, position of the first record, records): runs of nodes or of relationships,
    past the first `skip` records."""
    kind, first, batch = "", 0, list[dict[str, Any]]()
    for n, (_, record) in enumerate(_records(path)):
        if n < skip:
            continue
        this = "node" if "node" in record else "relationship"
        if batch and (this != kind or len(batch) >= size):
            yield kind, first, batch
            batch = []
        if not batch:
            kind, first = this, n
        batch.append(record)
    if batch:
        yield kind, first, batch


async def _abandoned(db: Database, org: str, digest: str) -> bool:
    """Whether the checkpoint of the file `digest`'s import into `org`, which wrote nothing,
    is gone now."""
    row = await db.write(lambda tx: tx.row("abandon_import", org=org, digest=digest))
    return row is not None and int(row["abandoned"]) > 0


async def import_org(
    db: Database, path: Path, org: str | None, advance: Advance, batch: int = 500,
    checked: Advance = lambda n: None,
) -> Counts:
    """Read an export into the org `org` (the file's own name when None), which must not
    exist unless this is the same file's unfinished import; answers what the file held. The
    whole file is checked first (`checked` counts its records), so a file that is cut or
    changed writes nothing."""
    header = read_header(path)
    check_export(path, header, checked)
    source, target = str(header["org"]), org or str(header["org"])
    digest = _digest(path)
    # the file's references, made the target's own: two imports of one file (into two orgs)
    # never share a node, nor does org delete of one find the other's
    prefix = digest[:16] + hashlib.sha256(target.encode()).hexdigest()[:8] + ":"
    await db.apply_schema()
    state = await db.read(lambda tx: tx.row("import_state", org=target))
    assert state is not None
    unfinished = state["import"]
    # (an unfinished import of another file that stopped before its first batch wrote anything
    # holds nothing: it gives way)
    if (
        unfinished is not None
        and unfinished["digest"] != digest
        and (int(unfinished["lines"]) > 0
             or not await _abandoned(db, target, unfinished["digest"]))
    ):
        raise SetupError(f"an import of another file into {target!r} is unfinished")
    if unfinished is None and state["exists"]:
        raise SetupError(f"org {target!r} exists already: import into a new name (--org NEW)")
    begun = await db.write(
        lambda tx: tx.row("begin_import", org=target, digest=digest, refs=prefix, now=now_ms())
    )
    assert begun is not None
    done, prefix = int(begun["lines"]), str(begun["refs"])  # a resumed import's own
    advance(done)
    for kind, first, records in _batches(path, done, batch):
        step = {"org": target, "digest": digest, "from": first, "to": first + len(records)}
        if kind == "node":
            rows = [renamed(r, source, target) for r in records]
            params: dict[str, Any] = {"nodes": [
                {"ref": prefix + r["node"], "labels": r["labels"], "properties": r["properties"]}
                for r in rows]}
        else:
            params = {"relationships": [
                {"type": r["relationship"], "start": prefix + r["start"],
                 "end": prefix + r["end"], "properties": r["properties"]} for r in records]}
        statement = "import_nodes" if kind == "node" else "import_relationships"

        async def work(tx: Tx, statement: str = statement, params: dict[str, Any] = params,
                       step: dict[str, Any] = step, expected: int = len(records)) -> None:
            row = await tx.row(statement, **step, **params)
            if row is None:
                raise SetupError("another import of this file is running; let it finish")
            if int(row["made"]) != expected:
                raise SetupError(f"{path} names a node it does not hold (record {step['from']})")

        try:
            await db.write(work)
        except SessionConflict as exc:  # a unique id of the file is in the database already
            abandoned = await db.write(
                lambda tx: tx.row("abandon_import", org=target, digest=digest))
            # an import that wrote records before keeps them, for org delete to find
            written = "" if abandoned and abandoned["abandoned"] else (
                f"; what it wrote of org {target!r} stays until `openbot-memory org delete --org "
                f"{target}`")
            raise SetupError(
                f"the export's ids are in this database already (is org {source!r} still "
                f"here?): import into another database, or delete that org first{written}"
            ) from exc
        advance(len(records))
    while True:
        row = await db.write(lambda tx: tx.row("unmark_imported", prefix=prefix, batch=batch))
        if row is None or int(row["unmarked"]) == 0:
            break
    await db.write(lambda tx: tx.row("end_import", org=target, digest=digest))
    return Counts(int(header["nodes"]), int(header["relationships"]))
