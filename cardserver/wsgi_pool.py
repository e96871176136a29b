"""The sync site (DRF API, pages, admin) served from an ASGI event loop by a pool of threads.

``cardserver.asgi`` hands every request that does not wait (streams and ``wait/`` wait
on the event loop) to ``WSGIPool``: Django's WSGI handler run in one of a fixed number of
threads, as gunicorn's gthread workers ran it, so that each thread keeps its database
connection (``CONN_MAX_AGE``) and no request pays for a thread of its own.

Each thread runs its requests in a context of its own that lasts as long as the thread,
as a gthread worker's thread does: what Django keeps per thread (database connection,
caches) is made once, not once a request.

A request crosses between the loop and the pool once each way: the loop reads the
request's body, a thread runs the application and gathers the whole response, and the
loop sends it. a2wsgi's ``WSGIMiddleware``, used before, handed the response back piece
by piece (the status and headers, each chunk of the body, the end), each time waiting in
the thread for a task it made on the loop: four round trips between threads a request,
about a fifth of a worker's samples under py-spy during the API benchmark
(``benchmarks.api --servers asgi,gthread``), which with a new cache client a request
made the sync API slower than on gthread workers.

A request's body is read under two rules, so that a client cannot hold the loop's
attention or a thread for free: a body declared longer than ``max_body(path)`` is not read
at all (the application sees its ``Content-Length`` and refuses it,
``cardserver.middleware.RequestBodyLimitMiddleware``), and a body that has not arrived
whole within ``body_timeout`` seconds raises ``BodyTimeout`` (no thread is taken before
the body is whole). A client that leaves mid-body is let go: nothing runs for it.

A response longer than ``buffer_bytes`` (a large static file) is not held whole: it is
sent in pieces of about that size, from the thread, as a2wsgi sent it.

The requests that wait (streams, ``wait/``) are opened the same way, by a pool made with
``hold=True`` (``cardserver.asgi``): their environ carries ``serving.HOLD``, their view
answers a ``HeldResponse``, and ``answer`` returns it to the event loop unsent.
"""

from __future__ import annotations

import asyncio
import io
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from a2wsgi.wsgi import build_environ

from cardserver.serving import HOLD, HeldResponse


class BodyTimeout(Exception):
    """The request's body did not arrive whole within the pool's ``body_timeout``."""


class WSGIPool:
    """An ASGI application running the WSGI application ``app`` in ``threads`` threads."""

    def __init__(self, app, *, threads: int = 8, executor: ThreadPoolExecutor | None = None,
                 hold: bool = False, buffer_bytes: int = 256 * 1024,
                 spool_bytes: int = 2_621_440,
                 max_body: Callable[[str], int | None] | None = None,
                 body_timeout: float | None = None) -> None:  # fmt: skip
        self.app = app
        self.executor = executor or ThreadPoolExecutor(
            max_workers=threads, thread_name_prefix="wsgi"
        )
        self.hold = hold
        self.buffer_bytes = buffer_bytes
        # A request body larger than this waits in a temporary file (as Django's own ASGI
        # handler keeps it, FILE_UPLOAD_MAX_MEMORY_SIZE), not in memory.
        self.spool_bytes = spool_bytes
        # The longest body a path may send (None: no limit), and the seconds its whole
        # body may take to arrive (None: no limit).
        self.max_body = max_body
        self.body_timeout = body_timeout

    async def __call__(self, scope, receive, send) -> None:
        answer = await self.answer(scope, receive, send)
        if isinstance(answer, list):
            await _send_all(send, answer)

    async def answer(self, scope, receive, send) -> list[dict] | HeldResponse | None:
        """Run the application: the messages left to send, a ``HeldResponse`` (a pool
        made with ``hold``), or None if the client left before its request was read.

        Raise ``BodyTimeout`` if the body did not arrive within ``body_timeout``."""
        limit = self.max_body(scope.get("path", "")) if self.max_body else None
        declared = _content_length(scope)
        body, length = io.BytesIO(), None
        if limit is None or declared is None or declared <= limit:
            try:
                async with asyncio.timeout(self.body_timeout):
                    read = await self._read_body(receive, limit)
            except TimeoutError:
                raise BodyTimeout(f"no whole body within {self.body_timeout} s") from None
            if read is None:  # the client left before sending its whole request
                return None
            body, length = read
        # Else refused by the application from its Content-Length: not a byte is read.
        loop = asyncio.get_running_loop()
        environ = build_environ(scope, body)
        if length is not None:
            # A body without a length (chunked) that went over the limit: refused as if
            # it had declared what it sent.
            environ["CONTENT_LENGTH"] = str(length)
        if self.hold:
            environ[HOLD] = True
        try:
            # In the thread's own context, not a copy of this request's: Django keeps its
            # caches (the Redis client of the rate limits, its connection) in asgiref
            # Locals, which live in a context variable. A fresh context for each request,
            # as a2wsgi gave, built a new client and connected to Redis again each time.
            return await loop.run_in_executor(self.executor, self._respond, environ, loop, send)
        finally:
            body.close()

    async def _read_body(self, receive, limit: int | None):
        """Return the body and None, or an empty body and the length read once it went
        over ``limit``; None if the client left."""
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        if not message.get("more_body"):  # the whole body in one message: nearly always
            data = message.get("body", b"")
            if limit is not None and len(data) > limit:
                return io.BytesIO(), len(data)
            return io.BytesIO(data), None
        # Closed by the caller once the request is answered.
        body = tempfile.SpooledTemporaryFile(max_size=self.spool_bytes, mode="w+b")  # noqa: SIM115
        received = 0
        try:
            while True:
                chunk = message.get("body", b"")
                received += len(chunk)
                if limit is not None and received > limit:
                    body.close()
                    return io.BytesIO(), received
                body.write(chunk)
                if not message.get("more_body"):
                    body.seek(0)
                    return body, None
                message = await receive()
                if message["type"] == "http.disconnect":
                    body.close()
                    return None
        except BaseException:  # timed out (cancelled)
            body.close()
            raise

    def _respond(self, environ, loop, send) -> list[dict] | HeldResponse:
        """Run the application (in a pool thread); return the messages left to send.

        The response's ``close`` (Django's ``request_finished``: the database connection
        kept or closed) runs here too, in the thread that used the connection; a
        ``HeldResponse``'s too: what it waits for reads in other threads.
        """
        pending: list[dict] = []
        chunks: list[bytes] = []
        held = 0
        flushed = False

        def start_response(status, headers, exc_info=None):
            if exc_info is not None and flushed:  # too late to answer otherwise
                raise exc_info[1].with_traceback(exc_info[2])
            pending[:] = [
                {
                    "type": "http.response.start",
                    "status": int(status.split(" ", 1)[0]),
                    "headers": [
                        (name.strip().encode("latin-1").lower(), value.strip().encode("latin-1"))
                        for name, value in headers
                    ],
                }
            ]
            return chunks.append  # WSGI's write(); Django never calls it

        iterable = self.app(environ, start_response)
        if isinstance(iterable, HeldResponse):
            iterable.close()
            return iterable
        try:
            for chunk in iterable:
                if not chunk:
                    continue
                chunks.append(chunk)
                held += len(chunk)
                if held >= self.buffer_bytes:
                    body = {"type": "http.response.body", "body": b"".join(chunks)}
                    pending.append(body | {"more_body": True})
                    asyncio.run_coroutine_threadsafe(_send_all(send, pending), loop).result()
                    pending, chunks, held, flushed = [], [], 0, True
        finally:
            close = getattr(iterable, "close", None)
            if close is not None:
                close()
        pending.append({"type": "http.response.body", "body": b"".join(chunks)})
        return pending


def _content_length(scope) -> int | None:
    """Return the request's declared ``Content-Length``, or None if it has none."""
    for name, value in scope.get("headers") or ():
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None  # the server refuses such a request before it gets here
    return None


async def _send_all(send, messages: list[dict]) -> None:
    for message in messages:
        await send(message)
