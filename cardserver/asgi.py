"""ASGI entry point: the web process of every shape (``cardserver/gunicorn.py``, ``make run``).

    gunicorn -c python:cardserver.gunicorn cardserver.asgi:application

One event loop per process serves two kinds of request:

- **Waiting** (``/stream/``, ``.../wait/``): Django's async handler and async views
  (``games/streams.py``). A waiter costs a coroutine and a socket, not a thread: one
  process holds thousands, woken by the live hub (``games/live.py``).
- **Everything else** (the sync DRF API, pages, admin): Django's WSGI handler in a fixed
  pool of ``GUNICORN_THREADS`` threads (``cardserver.wsgi_pool``), exactly as under
  gunicorn's gthread workers: each thread keeps its database connection
  (``CONN_MAX_AGE``), and no request pays for a thread of its own. (Django's async
  handler would run each sync view in a new thread with a new database connection.)

Each request gets one access-log line (``gunicorn.access``, the fields of
``cardserver.logs``) with ``match_id`` for a match's URL, and the sends of a waiting
response time out after ``LIVE_SEND_TIMEOUT`` seconds: a client that stops reading is
cut off, never buffered without bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import re
import socket
import struct
import time

from django.core.asgi import get_asgi_application
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler

from cardserver import gcstats, serving
from cardserver.serving import in_async_server
from cardserver.wsgi_pool import WSGIPool

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cardserver.settings")

get_asgi_application()  # django.setup()

from django.conf import settings  # noqa: E402
from django.core.wsgi import get_wsgi_application  # noqa: E402
from django.urls import get_resolver  # noqa: E402

access_log = logging.getLogger("gunicorn.access")

# The routes served by async views; every other path goes to the WSGI pool.
LIVE_PATH = re.compile(r"^/api/v1/(?:matches/\d+/(?:stream|wait)/|stream/events/)$")
MATCH_PATH = re.compile(r"^/api/v1/matches/(\d+)/")


class LiveHandler(ASGIHandler):
    """Django's ASGI handler without a thread of its own per request.

    Django runs each request's thread-sensitive sync calls (its request signals) in a
    thread made for that request, alive until the response ends: a thread per open stream.
    Here they share the process's one thread-sensitive thread; the views' database reads
    go to the live reader pool (``games.live.run_sync``).
    """

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        in_async_server.set(True)
        await self.handle(scope, receive, send)

    async def listen_for_disconnect(self, receive) -> None:
        """Return when the client leaves (Django's raises ``RequestAborted``, then ignores it).

        Django's exception, kept by the task and raised again in ``handle``, whose frame
        holds the task, made each closed stream a reference cycle (its frames, both tasks,
        the request, the transport: some 75 objects) that only a full collection frees,
        and the web process's thresholds make those rare: after 2,000 streams closed, one
        process still held 150,000 such objects. ``handle`` only needs the task to end.
        """
        message = await receive()
        if message["type"] != "http.disconnect":  # as Django's: never happens
            raise AssertionError(f"Invalid ASGI message after request body: {message['type']}")


class Application:
    """Route, log and time out sends; answer the lifespan protocol."""

    def __init__(self) -> None:
        self.live = LiveHandler()
        threads = int(os.environ.get("GUNICORN_THREADS") or 8)
        spool = settings.FILE_UPLOAD_MAX_MEMORY_SIZE
        self.wsgi = WSGIPool(get_wsgi_application(), threads=threads, spool_bytes=spool)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        path = scope.get("path", "")
        live = bool(LIVE_PATH.match(path))
        started = time.perf_counter()
        answer = {"status": 0, "bytes": 0}
        timeout = settings.LIVE_SEND_TIMEOUT if live else None

        async def logged_send(message) -> None:
            if message["type"] == "http.response.start":
                answer["status"] = message["status"]
            elif message["type"] == "http.response.body":
                answer["bytes"] += len(message.get("body", b""))
            if timeout:
                try:
                    async with asyncio.timeout(timeout):  # no task of its own, as wait_for
                        await send(message)
                except TimeoutError:
                    answer["cut"] = True
                    _cut_off(send)
                    raise RequestAborted("the client stopped reading") from None
            else:
                await send(message)

        try:
            await (self.live if live else self.wsgi)(scope, receive, logged_send)
        except RequestAborted:
            if not answer.get("cut"):
                raise
        finally:
            _log_access(scope, answer, time.perf_counter() - started)

    async def _lifespan(self, receive, send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                serving.shutdown()
                await send({"type": "lifespan.shutdown.complete"})
                return


def _cut_off(send) -> None:
    """Drop the connection of ``send`` at once, and what waits in its buffers.

    The ASGI server, told that a response failed, closes its connection gracefully: it
    waits until its buffer (and the kernel's) has reached the client, which a client that
    does not read never lets happen, so the socket and its buffers would stay for as long
    as the client likes. uvicorn's ``send`` is a method of the request's cycle, which holds
    the transport: closed with a zero linger, the kernel drops its queue and resets.
    """
    transport = getattr(getattr(send, "__self__", None), "transport", None)
    if transport is None or transport.is_closing() and not transport.get_write_buffer_size():
        return
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()


def _log_access(scope, answer: dict, seconds: float) -> None:
    if not access_log.isEnabledFor(logging.INFO):
        return
    headers = dict(scope.get("headers") or ())
    client = scope.get("client") or ("-", 0)
    query = (scope.get("query_string") or b"").decode("latin-1")
    atoms = {
        "r": scope.get("path", "") + (f"?{query}" if query else ""),
        "h": client[0],
        "m": scope.get("method"),
        "U": scope.get("path"),
        "q": query,
        "s": answer["status"],
        "B": answer["bytes"],
        "D": int(seconds * 1_000_000),
        "a": headers.get(b"user-agent", b"-").decode("latin-1"),
    }
    found = MATCH_PATH.match(scope.get("path", ""))
    extra = {"match_id": int(found.group(1))} if found else {}
    if answer.get("cut"):
        extra["cut_off"] = "slow reader"
    access_log.info('%(h)s "%(m)s %(r)s" %(s)s %(B)s %(D)sus', atoms, extra=extra)


application = Application()

# As in cardserver/wsgi.py: import every view now, then keep the loaded project's objects
# out of the garbage collector's reach (no full collection walking them mid-request).
get_resolver().url_patterns  # noqa: B018 - imports the URLconf and its views
gc.freeze()
# A process that holds thousands of streams keeps some 120 objects alive for each, and a
# full collection walks every one: 600,000 at 5,000 streams, a pause of hundreds of
# milliseconds for every request of the process. Python runs one whenever the objects
# promoted to the oldest generation since the last reach a quarter of it; with its
# default young generation (700 allocations) the objects of the requests in flight are
# promoted at nearly every collection, which at 10,000 streams set off 4 full
# collections per worker in 15 s of play, a third of the workers' time
# (benchmarks.live). A young generation of 20,000 lets a request's objects die before
# they are promoted. The oldest generation keeps Python's 10 middle collections between
# two full ones: the reference cycles of the requests that were in flight at a middle
# collection (a DRF request, its view and response; a listing's matches and their
# prefetched seats) are freed by nothing but a full collection, and with 100 the web
# process went 13 minutes without one and grew 5.5 MB per 1,000 matches followed by a
# spectator who listed the active matches first; with 10 it stayed flat (0.2 MB).
gc.set_threshold(20_000, 10, 10)
gcstats.install_from_environment()
