"""Logs: plain text for a terminal or one JSON object per line, each with its request's id.

A log line never holds a token, a memory's content or an item's text: the request line is
built from the route template, the org, the status and the duration only, and handlers log
error tags, not messages that may quote a body.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from contextvars import ContextVar
from typing import Any

from app.config import Settings

request_id: ContextVar[str | None] = ContextVar("request_id", default=None)

# The structured fields a record may carry (`extra={"fields": {...}}`), in the order shown.
FIELDS = "fields"


def fields_of(record: logging.LogRecord) -> dict[str, Any]:
    """The record's structured fields, with the request id of its context when it has one."""
    found: dict[str, Any] = dict(getattr(record, FIELDS, None) or {})
    if "requestId" not in found:
        current = getattr(record, "requestId", None) or request_id.get()
        if current is not None:
            found = {"requestId": current, **found}
    return found


class JsonLines(logging.Formatter):
    """One JSON object per line: time, level, logger, message, the fields, a traceback."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            **fields_of(record),
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)


class PlainText(logging.Formatter):
    """`time level logger [request id] message key=value ...`, then a traceback if any."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        found = fields_of(record)
        rid = found.pop("requestId", None)
        text = super().format(record)
        head, _, rest = text.partition("\n")
        if rid is not None:
            head = head.replace(f" {record.name} ", f" {record.name} [{rid}] ", 1)
        if found:
            head += " " + " ".join(f"{key}={value}" for key, value in found.items())
        return head + ("\n" + rest if rest else "")


def formatter(log_format: str) -> logging.Formatter:
    return JsonLines() if log_format == "json" else PlainText()


def configure(settings: Settings) -> None:
    """Route every logger (uvicorn's too) to stderr in the configured format and level; other
    libraries' loggers log from INFO up whatever the level."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter(settings.log_format))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    level = logging.getLevelNamesMapping()[settings.log_level]
    # DEBUG is the service's own: the libraries' DEBUG lines quote what they carry (the
    # driver's a statement's parameters, the model SDK's a prompt), which no line may hold
    root.setLevel(max(level, logging.INFO))
    logging.getLogger("openbot_memory").setLevel(level)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        logging.getLogger(name).handlers = []
        logging.getLogger(name).propagate = True
