"""Structured logs: one JSON object per line, with the match id on every line about a match.

``LOG_FORMAT=json`` (the default when ``DEBUG`` is off) formats every record as one JSON
object: ``time``, ``level``, ``logger``, ``message``, ``match_id`` when the record is
about a match, the fields passed in ``extra=...``, and ``exc_info`` as text. Gunicorn's
access log goes through the same formatter (``cardserver/gunicorn.py``), with the
request's method, path, status and duration as fields.

A record is about a match when the code that logs passes ``extra={"match_id": ...}``,
or when it runs inside ``match_context(match_id)``: an API request to
``/api/v1/matches/<id>/...`` (``MatchContextMiddleware``) and a Celery task whose
arguments include ``match_id`` (``cardserver.celery``) run inside one.

This module imports no Django: gunicorn loads it before Django is set up.
"""

from __future__ import annotations

import json
import logging
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

_MATCH_ID: ContextVar[int | None] = ContextVar("log_match_id", default=None)

# The attributes every LogRecord has; anything else on a record came from ``extra``.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "taskName",
}


def current_match_id() -> int | None:
    """Return the match id that log records of this context carry, or None."""
    return _MATCH_ID.get()


def set_match_id(match_id: int | None) -> None:
    """Make the log records of this context (thread, task) carry ``match_id`` from now on.

    For code that cannot wrap its work in ``match_context``: a request middleware sets it
    at the start of every request, so the server's own lines after the response (the
    access log) still carry it.
    """
    _MATCH_ID.set(match_id)


@contextmanager
def match_context(match_id: int | None) -> Iterator[None]:
    """Within this block, every log record carries ``match_id`` (unless it names its own)."""
    token = _MATCH_ID.set(match_id)
    try:
        yield
    finally:
        _MATCH_ID.reset(token)


class MatchIdFilter(logging.Filter):
    """Give a record the context's ``match_id`` when it carries none of its own."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "match_id", None) is None:
            match_id = _MATCH_ID.get()
            if match_id is not None:
                record.match_id = match_id
        return True


# json.dumps(entry, default=str, ensure_ascii=False), without building an encoder per line.
_ENCODER = json.JSONEncoder(default=str, ensure_ascii=False)


class JsonFormatter(logging.Formatter):
    """Format a record as one line of JSON."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, tz=UTC).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname,
            "logger": record.name,
        }
        if record.name == "gunicorn.access" and isinstance(record.args, dict):
            entry.update(_access_fields(record.args))
        else:
            entry["message"] = record.getMessage()
        for key, value in vars(record).items():
            if key not in _STANDARD and key not in entry:
                entry[key] = value
        if record.exc_info:
            entry["exc_info"] = "".join(traceback.format_exception(*record.exc_info)).rstrip()
        elif record.exc_text:
            entry["exc_info"] = record.exc_text
        if record.stack_info:
            entry["stack_info"] = record.stack_info
        return _ENCODER.encode(entry)


def _access_fields(atoms: dict[str, Any]) -> dict[str, Any]:
    """Return the fields of a gunicorn access-log line (its "atoms")."""
    query = atoms.get("q") or ""
    path = atoms.get("U", "")
    fields = {
        "message": f"{atoms.get('m', '')} {path}{'?' + query if query else ''} {atoms.get('s')}",
        "method": atoms.get("m"),
        "path": path,
        "status": _int(atoms.get("s")),
        "duration_ms": round(_int(atoms.get("D")) / 1000, 3),
        "bytes": _int(atoms.get("B")),
        "remote_addr": atoms.get("h"),
        "user_agent": atoms.get("a"),
    }
    return fields


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def logging_config(*, log_format: str, level: str) -> dict[str, Any]:
    """Return the ``LOGGING`` dict: JSON lines or plain text, on stderr, at ``level``."""
    formatters = {
        "json": {"()": "cardserver.logs.JsonFormatter"},
        "text": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
    }
    if log_format not in formatters:
        raise ValueError(f"LOG_FORMAT={log_format!r}: use json or text")
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"match_id": {"()": "cardserver.logs.MatchIdFilter"}},
        "formatters": {"console": formatters[log_format]},
        "handlers": {
            "console": {
                "class": "logging.StreamHandler",
                "formatter": "console",
                "filters": ["match_id"],
            },
        },
        "root": {"handlers": ["console"], "level": level},
        # Django's default configuration gives "django" handlers of its own; naming the
        # logger here removes them, so its records reach the console once, through root.
        "loggers": {"django": {"level": "INFO"}},
    }
