"""ASGI entry point: the web process of every shape (``cardserver/gunicorn.py``, ``make run``).

    gunicorn -c python:cardserver.gunicorn cardserver.asgi:application

One event loop per process serves two kinds of request:

- **Everything that answers at once** (the sync DRF API, pages, admin): Django's WSGI
  handler in a fixed pool of ``GUNICORN_THREADS`` threads (``cardserver.wsgi_pool``),
  exactly as under gunicorn's gthread workers: each thread keeps its database connection
  (``CONN_MAX_AGE``), and no request pays for a thread of its own. (Django's async
  handler would run each sync view in a new thread with a new database connection.)
- **Waiting** (``/stream/``, ``.../wait/``): opened the same way, in the live reader
  threads (``serving.reader_pool``): the middleware and the DRF view check it as any
  request and answer a ``serving.HeldResponse``; then ``hold`` awaits what it waits for
  on the event loop (``games/streams.py``), woken by the live hub (``games/live.py``),
  and sends it. A waiter costs a coroutine and a socket, not a thread, and no more
  objects than it needs: Django's async handler kept, for as long as a stream stayed
  open, its request, two tasks and their contexts, the response and three layers of
  iterators, some 140 objects a stream in all, each walked by every full collection of
  the garbage collector and by the middle one that promotes them.

Each request gets one access-log line (``gunicorn.access``, the fields of
``cardserver.logs``) with ``match_id`` for a match's URL, and the sends of a waiting
response time out after ``LIVE_SEND_TIMEOUT`` seconds: a client that stops reading is
cut off, never buffered without bound.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import os
import re
import socket
import struct
import time

import django
from django.core.exceptions import RequestAborted

from cardserver import gcstats, serving
from cardserver.logs import set_match_id
from cardserver.serving import HeldResponse, in_async_server, reader_pool
from cardserver.wsgi_pool import BodyTimeout, WSGIPool

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cardserver.settings")

django.setup(set_prefix=False)

from django.conf import settings  # noqa: E402
from django.core.wsgi import get_wsgi_application  # noqa: E402
from django.urls import get_resolver  # noqa: E402

from cardserver.api_errors import error_body  # noqa: E402
from cardserver.middleware import body_limit  # noqa: E402

access_log = logging.getLogger("gunicorn.access")

# The routes that wait (opened by the reader threads, then held); the rest go to the WSGI pool.
LIVE_PATH = re.compile(r"^/api/v1/(?:matches/\d+/(?:stream|wait)/|stream/events/)$")
MATCH_PATH = re.compile(r"^/api/v1/matches/(\d+)/")


class Application:
    """Route, log and time out sends; answer the lifespan protocol."""

    def __init__(self) -> None:
        threads = int(os.environ.get("GUNICORN_THREADS") or 8)
        handler = get_wsgi_application()
        bodies = {
            "spool_bytes": settings.FILE_UPLOAD_MAX_MEMORY_SIZE,
            "max_body": body_limit,
            "body_timeout": settings.REQUEST_BODY_TIMEOUT,
        }
        self.wsgi = WSGIPool(handler, threads=threads, **bodies)
        self.opener = WSGIPool(handler, executor=reader_pool(), hold=True, **bodies)

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        live = bool(LIVE_PATH.match(scope.get("path", "")))
        started = time.perf_counter()
        logged = LoggedSend(send, settings.LIVE_SEND_TIMEOUT if live else None)
        try:
            if live:
                await self._live(scope, receive, logged)
            else:
                await self.wsgi(scope, receive, logged)
        except BodyTimeout:
            await _body_timed_out(logged)
        except RequestAborted:
            if not logged.cut:
                raise
        finally:
            _log_access(scope, logged, time.perf_counter() - started)

    async def _live(self, scope, receive, send) -> None:
        answer = await self.opener.answer(scope, receive, send)
        if not isinstance(answer, HeldResponse):
            for message in answer or ():
                await send(message)
            return
        found = MATCH_PATH.match(scope["path"])
        if found:  # the log lines of its reads (games.live.run_sync)
            set_match_id(int(found.group(1)))
        # Nothing of the response but its headers stays for as long as the wait.
        held = (answer.wait, list(answer.items()), list(answer.cookies.values()))
        del answer
        await hold(*held, receive, send)

    async def _lifespan(self, receive, send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                serving.shutdown()
                await send({"type": "lifespan.shutdown.complete"})
                return


class LoggedSend:
    """``send``, counting what is sent for the access log, each send cut off after
    ``timeout`` seconds (if any). One small object: a process keeps one per open stream."""

    __slots__ = ("send", "timeout", "status", "bytes", "cut")

    def __init__(self, send, timeout: float | None) -> None:
        self.send, self.timeout = send, timeout
        self.status = self.bytes = 0
        self.cut = False

    async def __call__(self, message) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
        elif message["type"] == "http.response.body":
            self.bytes += len(message.get("body", b""))
        if not self.timeout:
            await self.send(message)
            return
        try:
            async with asyncio.timeout(self.timeout):  # no task of its own, as wait_for
                await self.send(message)
        except TimeoutError:
            self.cut = True
            _cut_off(self.send)
            raise RequestAborted("the client stopped reading") from None


async def hold(wait, headers: list, cookies: list, receive, send) -> None:
    """Await ``wait()`` (a ``HeldResponse``'s) and send its answer, with ``headers`` and
    ``cookies`` (the held response's); stop at once if the client leaves.

    The client's leaving (``receive`` answers ``http.disconnect``) cancels this task, as
    Django's handler cancels its view's: a waiter asleep on the hub hears nothing else,
    and the server drops what is sent to a connection that is gone.
    """
    in_async_server.set(True)
    task = asyncio.current_task()
    watcher = asyncio.ensure_future(receive())
    watcher.add_done_callback(task.cancel)
    try:
        waiting = wait()
        del wait
        answer = await waiting
        events = getattr(answer, "events", None)
        await send({
            "type": "http.response.start",
            "status": answer.status_code,
            "headers": _answer_headers(answer, headers, cookies, events is None),
        })  # fmt: skip
        if events is None:
            await send({"type": "http.response.body", "body": answer.content})
            return
        del answer
        try:
            async for chunk in events:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        finally:
            await events.aclose()
        await send({"type": "http.response.body", "body": b""})
    except asyncio.CancelledError:
        if not watcher.done() or watcher.cancelled():
            raise
        task.uncancel()  # the client left
    finally:
        watcher.remove_done_callback(task.cancel)
        watcher.cancel()


async def _body_timed_out(send) -> None:
    """Answer 408 (the JSON error body) to a request whose body stopped arriving, and
    close its connection: what is left of the body is not awaited."""
    body = json.dumps(
        error_body(
            code="request_timeout",
            message=f"The request body did not arrive within {settings.REQUEST_BODY_TIMEOUT:g} s.",
        )
    ).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": 408, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _answer_headers(answer, held_headers, held_cookies, whole: bool) -> list[tuple[bytes, bytes]]:
    """The answer's headers, then those the middleware gave the held response (security
    headers, ``Vary``), and the cookies of both."""
    pairs = list(answer.items())
    own = {name.lower() for name, _ in pairs}
    if whole and "content-length" not in own:
        pairs.append(("Content-Length", str(len(answer.content))))
    pairs += [
        (name, value) for name, value in held_headers
        if name.lower() not in own and name.lower() not in ("content-type", "content-length")
    ]  # fmt: skip
    pairs += [("Set-Cookie", c.output(header="").strip()) for c in held_cookies]
    pairs += [("Set-Cookie", c.output(header="").strip()) for c in answer.cookies.values()]
    return [(name.encode("latin-1").lower(), value.encode("latin-1")) for name, value in pairs]


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


def _log_access(scope, answer: LoggedSend, seconds: float) -> None:
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
        "s": answer.status,
        "B": answer.bytes,
        "D": int(seconds * 1_000_000),
        "a": headers.get(b"user-agent", b"-").decode("latin-1"),
    }
    found = MATCH_PATH.match(scope.get("path", ""))
    extra = {"match_id": int(found.group(1))} if found else {}
    if answer.cut:
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
