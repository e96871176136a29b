"""Gunicorn's access log in JSON: the lines the project's logger writes are those that
gunicorn's own access logger gives the same formatter."""

from __future__ import annotations

import datetime
import io
import json
import logging

from gunicorn.config import Config
from gunicorn.glogging import Logger

from cardserver import gunicorn as gunicorn_conf
from cardserver.logs import JsonFormatter, MatchIdFilter, match_context


class _Response:
    status = "201 Created"
    sent = 1339
    headers = [("Content-Type", "application/json"), ("X-Frame-Options", "DENY")]


class _Request:
    headers = [("HOST", "127.0.0.1:8000"), ("AUTHORIZATION", "Token secret")]


ENVIRON = {
    "REQUEST_METHOD": "POST",
    "RAW_URI": "/api/v1/matches/7/moves/?x=1",
    "PATH_INFO": "/api/v1/matches/7/moves/",
    "QUERY_STRING": "x=1",
    "SERVER_PROTOCOL": "HTTP/1.1",
    "REMOTE_ADDR": "10.0.0.5",
    "HTTP_USER_AGENT": 'a "quoted" agent/1.0',
    "HTTP_AUTHORIZATION": "Token secret",
}


def _logger(stream: io.StringIO) -> gunicorn_conf.JsonAccessLogger:
    """The project's access logger, writing JSON lines to ``stream`` (no global set-up)."""
    logger = gunicorn_conf.JsonAccessLogger.__new__(gunicorn_conf.JsonAccessLogger)
    logger.cfg = Config()
    logger.cfg.set("accesslog", "-")
    logger._access_log_enabled = True
    logger.error_log = logging.getLogger("test.access.errors")
    # Named as gunicorn's, outside the logging hierarchy: nothing global is touched.
    logger.access_log = logging.Logger("gunicorn.access", logging.INFO)
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(MatchIdFilter())
    logger.access_log.handlers = [handler]
    return logger


def test_json_access_lines_are_those_of_gunicorns_own_atoms(monkeypatch):
    monkeypatch.setattr(gunicorn_conf, "_format", "json")
    stream = io.StringIO()
    logger = _logger(stream)
    took = datetime.timedelta(seconds=1, microseconds=2345)

    with match_context(7):
        logger.access(_Response(), _Request(), ENVIRON, took)
        Logger.access(logger, _Response(), _Request(), ENVIRON, took)

    ours, gunicorns = (json.loads(line) for line in stream.getvalue().splitlines())
    ours.pop("time"), gunicorns.pop("time")
    assert ours == gunicorns
    assert (ours["path"], ours["status"], ours["match_id"]) == ("/api/v1/matches/7/moves/", 201, 7)


def test_the_access_fields_are_read_from_the_atoms_given():
    from cardserver.logs import _access_fields

    atoms = gunicorn_conf.JsonAccessLogger._atoms(
        _Response(), ENVIRON, datetime.timedelta(microseconds=2345)
    )

    assert _access_fields(atoms) == {
        "message": "POST /api/v1/matches/7/moves/?x=1 201",
        "method": "POST",
        "path": "/api/v1/matches/7/moves/",
        "status": 201,
        "duration_ms": 2.345,
        "bytes": 1339,
        "remote_addr": "10.0.0.5",
        "user_agent": 'a "quoted" agent/1.0',
    }
