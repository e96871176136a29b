"""What the ASGI server (``cardserver.asgi``) and the views that wait tell each other.

- ``HeldResponse``: what a view that waits (a stream, ``wait/``) answers when the ASGI
  server asked it to (``HOLD`` in ``request.META``): the view and the middleware ran in a
  thread, as for any request; what it waits for then runs on the server's event loop.
- ``in_async_server`` is true in that waiting part (its database reads go to
  ``reader_pool``; see ``games.live.run_sync``).
- Callbacks given to ``on_shutdown`` run in the event loop when the server begins to stop
  (SIGTERM, SIGINT, the end of its lifespan), so that open streams can tell their clients
  to reconnect.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar

from django.conf import settings
from django.http import HttpResponse, StreamingHttpResponse

in_async_server: ContextVar[bool] = ContextVar("in_async_server", default=False)

# The WSGI environ key (a request's META) by which the ASGI server asks for a HeldResponse.
HOLD = "cardserver.hold"


class HeldResponse(HttpResponse):
    """An answer still to come: ``wait()``, awaited on the event loop, returns it.

    Its own headers are those the middleware gave it (security headers, cookies, ``Vary``);
    the server sends them with the answer's, whose own come first.
    """

    def __init__(self, wait: Callable[[], Awaitable[HttpResponse]]) -> None:
        super().__init__()
        self.wait = wait


class EventStream(StreamingHttpResponse):
    """A streaming response of ``events`` (bytes), which the server sends as they come."""

    def __init__(self, events: AsyncIterator[bytes], **kwargs) -> None:
        super().__init__(events, **kwargs)
        self.events = events


_readers: ThreadPoolExecutor | None = None
_readers_lock = threading.Lock()


def reader_pool() -> ThreadPoolExecutor:
    """The process's threads for the database work of waiting requests (``LIVE_READ_THREADS``).

    A fixed pool, not a thread per request: each thread keeps one database connection. The
    requests that wait are opened here too, so a storm of them (clients reconnecting to a
    restarted process) queues here, not in front of the rest of the API.
    """
    global _readers
    with _readers_lock:
        if _readers is None:
            _readers = ThreadPoolExecutor(
                max_workers=settings.LIVE_READ_THREADS, thread_name_prefix="live-read"
            )
        return _readers


def reader_pool_if_started() -> ThreadPoolExecutor | None:
    return _readers


_callbacks: list[Callable[[], None]] = []
_chained: set[int] = set()


def on_shutdown(callback: Callable[[], None]) -> None:
    if callback not in _callbacks:
        _callbacks.append(callback)


def shutdown() -> None:
    for callback in list(_callbacks):
        callback()


def chain_signals(loop) -> None:
    """Call ``shutdown`` (in ``loop``) on SIGTERM/SIGINT, before the server's own handler.

    The server, told to stop, stops accepting and waits for open responses to end; a
    stream would hold it until the graceful timeout and then be cut without a word.
    Called from the loop's thread once the server runs (its handlers are installed).
    """
    if threading.current_thread() is not threading.main_thread() or id(loop) in _chained:
        return
    _chained.add(id(loop))
    for signum in (signal.SIGTERM, signal.SIGINT):
        previous = signal.getsignal(signum)

        def handler(number, frame, previous=previous) -> None:
            loop.call_soon_threadsafe(shutdown)
            if callable(previous):
                previous(number, frame)

        signal.signal(signum, handler)
