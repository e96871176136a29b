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
from concurrent.futures import ThreadPoolExecutor

from a2wsgi.wsgi import build_environ

from cardserver.serving import HOLD, HeldResponse


class WSGIPool:
    """An ASGI application running the WSGI application ``app`` in ``threads`` threads."""

    def __init__(self, app, *, threads: int = 8, executor: ThreadPoolExecutor | None = None,
                 hold: bool = False, buffer_bytes: int = 256 * 1024,
                 spool_bytes: int = 2_621_440) -> None:  # fmt: skip
        self.app = app
        self.executor = executor or ThreadPoolExecutor(
            max_workers=threads, thread_name_prefix="wsgi"
        )
        self.hold = hold
        self.buffer_bytes = buffer_bytes
        # A request body larger than this waits in a temporary file (as Django's own ASGI
        # handler keeps it, FILE_UPLOAD_MAX_MEMORY_SIZE), not in memory.
        self.spool_bytes = spool_bytes

    async def __call__(self, scope, receive, send) -> None:
        answer = await self.answer(scope, receive, send)
        if isinstance(answer, list):
            await _send_all(send, answer)

    async def answer(self, scope, receive, send) -> list[dict] | HeldResponse | None:
        """Run the application: the messages left to send, a ``HeldResponse`` (a pool
        made with ``hold``), or None if the client left before its request was read."""
        body = await self._read_body(receive)
        if body is None:  # the client left before sending its whole request
            return None
        loop = asyncio.get_running_loop()
        environ = build_environ(scope, body)
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

    async def _read_body(self, receive):
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        if not message.get("more_body"):  # the whole body in one message: nearly always
            return io.BytesIO(message.get("body", b""))
        # Closed by the caller once the request is answered.
        body = tempfile.SpooledTemporaryFile(max_size=self.spool_bytes, mode="w+b")  # noqa: SIM115
        while True:
            body.write(message.get("body", b""))
            if not message.get("more_body"):
                body.seek(0)
                return body
            message = await receive()
            if message["type"] == "http.disconnect":
                body.close()
                return None

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


async def _send_all(send, messages: list[dict]) -> None:
    for message in messages:
        await send(message)
