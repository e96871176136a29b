"""Gunicorn's settings: uvicorn workers, keep-alive, and the access log in the project's format.

    gunicorn -c python:cardserver.gunicorn cardserver.asgi:application --bind 0.0.0.0:8000

Each of ``WEB_CONCURRENCY`` worker processes (default 2) is one uvicorn event loop
(``ArenaWorker``) running ``cardserver.asgi``: streams and ``wait/`` wait on the event
loop (a waiter costs a coroutine, not a thread), the rest of the API in a pool of
``GUNICORN_THREADS`` threads (default 8) as gthread workers ran it
(``cardserver/wsgi_pool.py``: each thread keeps its connections, and a request is handed
to a thread and back once), as fast as gthread workers (``benchmarks.api --servers
asgi,gthread``; figures in docs/matches-api.md).

With ``LOG_FORMAT=json`` (the default when ``DEBUG`` is off) every line gunicorn writes is
one JSON object; an access-log line has ``method``, ``path``, ``status``,
``duration_ms``, ``bytes``, ``remote_addr`` and, for a request about a match,
``match_id``. ``LOG_LEVEL`` applies to gunicorn's lines as to Django's.
"""

import logging
import os
import traceback

from gunicorn.glogging import Logger
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn_worker import UvicornWorker

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
# Command-line options override these.
worker_class = "cardserver.gunicorn.ArenaWorker"
workers = int(os.environ.get("WEB_CONCURRENCY") or 2)
# Read by cardserver/asgi.py (the WSGI pool's size); gunicorn's own `threads` is unused.
threads = int(os.environ.get("GUNICORN_THREADS") or 8)
# Seconds an idle kept-alive connection stays open. A server that closes it just as the
# client sends its next request on it makes that request fail with a reset (gunicorn's 2 s
# did, 3 times in 19,000 GETs); 75 s outlasts any client's reuse of a connection within
# seconds and the idle timeouts of common proxies (60 s), so the client closes first.
keepalive = int(os.environ.get("GUNICORN_KEEPALIVE") or 75)
# Seconds a worker's event loop may go without its heartbeat before the master kills it.
# Gunicorn's 30 s kills a worker that is only slow: thousands of streams closing at once
# on an overloaded machine kept a loop busy that long, and the kill cut 5,000 streams.
timeout = int(os.environ.get("GUNICORN_TIMEOUT") or 120)
# Open streams are told to reconnect at once on SIGTERM; other requests get this long.
graceful_timeout = int(os.environ.get("GUNICORN_GRACEFUL_TIMEOUT") or 30)
# No control socket ($HOME/.gunicorn/gunicorn.ctl): the image's user has no home, and two
# servers on one machine (tests, benchmarks) would share the path.
control_socket_disable = True


class JsonAccessLogger(Logger):
    """Gunicorn's logger, giving the JSON access log only the fields it writes.

    Gunicorn builds every "atom" of its access-log format for each request (the time
    formatted, each request and response header, each environment variable) whatever the
    format uses. A JSON line (``cardserver.logs.JsonFormatter``) reads eight of them, so
    in that format only those are built, exactly as gunicorn builds them; the text format
    gets gunicorn's own.
    """

    def access(self, resp, req, environ, request_time):
        if _format != "json":
            return super().access(resp, req, environ, request_time)
        if not self._access_enabled() or not self.access_log.isEnabledFor(logging.INFO):
            return
        # Wrapped as gunicorn wraps its own (quotes escaped, "-" for a missing atom).
        atoms = self.atoms_wrapper_class(self._atoms(resp, environ, request_time))
        try:
            self.access_log.info(self.cfg.access_log_format, atoms)
        except Exception:
            self.error(traceback.format_exc())

    @staticmethod
    def _atoms(resp, environ, request_time) -> dict:
        """Return the atoms ``cardserver.logs.JsonFormatter`` reads, as gunicorn gives them."""
        status = resp.status
        if isinstance(status, str):
            status = status.split(None, 1)[0]
        return {
            "h": environ.get("REMOTE_ADDR", "-"),
            "m": environ.get("REQUEST_METHOD"),
            "U": environ.get("PATH_INFO"),
            "q": environ.get("QUERY_STRING"),
            "s": status,
            "B": getattr(resp, "sent", None),
            "D": request_time.seconds * 1000000 + request_time.microseconds,
            "a": environ.get("HTTP_USER_AGENT", "-"),
        }

    def _access_enabled(self) -> bool:
        enabled = getattr(self, "access_log_enabled", None)  # gunicorn 24 and later
        if enabled is None:
            cfg = self.cfg
            enabled = bool(
                cfg.accesslog
                or cfg.logconfig
                or cfg.logconfig_dict
                or getattr(cfg, "logconfig_json", None)
                or (cfg.syslog and not cfg.disable_redirect_access_to_syslog)
            )
        return enabled


logger_class = JsonAccessLogger


class HeaderTimeoutProtocol(HttpToolsProtocol):
    """uvicorn's HTTP/1.1 protocol, closing a connection whose request's headers have not
    all arrived within ``REQUEST_HEADER_TIMEOUT`` seconds (default 10).

    uvicorn has no such timeout: a client that opens a connection and sends nothing, or
    its headers a byte at a time, held a socket for as long as it liked, and a few
    hundred such clients exhaust a process. The clock starts when the connection opens
    and again with the first byte of each later request on it (an idle kept-alive
    connection is the keep-alive timeout's); it stops when the headers are complete
    (the body has its own, ``REQUEST_BODY_TIMEOUT``: cardserver/wsgi_pool.py).
    """

    header_timeout = float(os.environ.get("REQUEST_HEADER_TIMEOUT") or 10.0)
    _header_timer = None

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._start_header_clock()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._start_header_clock()

    def on_headers_complete(self) -> None:
        self._stop_header_clock()
        super().on_headers_complete()

    def connection_lost(self, exc) -> None:
        self._stop_header_clock()
        super().connection_lost(exc)

    def _start_header_clock(self) -> None:
        self._stop_header_clock()
        self._header_timer = self.loop.call_later(self.header_timeout, self._headers_too_slow)

    def _stop_header_clock(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            self.transport.close()


class ArenaWorker(UvicornWorker):
    """Uvicorn's gunicorn worker, with the project's logging, graceful timeout and
    header timeout (``HeaderTimeoutProtocol``).

    ``cardserver.asgi`` writes the access log itself (uvicorn's own line has no duration);
    uvicorn's error lines go to the root logger like gunicorn's, and a shutdown waits at
    most ``graceful_timeout`` for open requests.
    """

    CONFIG_KWARGS = {
        "loop": "auto",
        "http": HeaderTimeoutProtocol,
        "access_log": False,
        "lifespan": "on",
    }

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        logging.getLogger("uvicorn.error").handlers = []
        logging.getLogger("uvicorn.error").propagate = True
        self.config.timeout_graceful_shutdown = self.cfg.graceful_timeout


def post_worker_init(worker) -> None:
    # Off unless MEMWATCH_DIR is set: samples of where the worker's memory goes, for a soak.
    from cardserver.memwatch import start_from_environment

    start_from_environment()
