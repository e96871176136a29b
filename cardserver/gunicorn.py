"""Gunicorn's settings: its own log lines and the access log in the project's format.

    gunicorn -c python:cardserver.gunicorn cardserver.wsgi --bind 0.0.0.0:8000

With ``LOG_FORMAT=json`` (the default when ``DEBUG`` is off) every line gunicorn writes is
one JSON object; an access-log line has ``method``, ``path``, ``status``,
``duration_ms``, ``bytes``, ``remote_addr`` and, for a request about a match,
``match_id``. ``LOG_LEVEL`` applies to gunicorn's lines as to Django's.
"""

import os

from cardserver.logs import logging_config

_debug = os.environ.get("DEBUG", "").strip().lower() not in ("0", "false", "no", "off")
_format = os.environ.get("LOG_FORMAT", "").strip().lower() or ("text" if _debug else "json")
_level = os.environ.get("LOG_LEVEL", "").strip().upper() or "INFO"

logconfig_dict = logging_config(log_format=_format, level=_level)
logconfig_dict["loggers"].update(
    {
        # Gunicorn's handlers are dropped: its lines reach the console through the root.
        "gunicorn.error": {"level": _level, "handlers": [], "propagate": True},
        "gunicorn.access": {"level": _level, "handlers": [], "propagate": True},
    }
)
# Threaded workers: a long-poll (`GET /api/v1/matches/<id>/wait/`) holds a thread, not a
# whole process. Command-line options override these.
worker_class = "gthread"
workers = int(os.environ.get("WEB_CONCURRENCY") or 2)
threads = int(os.environ.get("GUNICORN_THREADS") or 8)
# No control socket ($HOME/.gunicorn/gunicorn.ctl): the image's user has no home, and two
# servers on one machine (tests, benchmarks) would share the path.
control_socket_disable = True
