"""What the ASGI server (``cardserver.asgi``) tells the code it runs, without an import of it.

``in_async_server`` is true in a request that the server's async handler serves (its
database reads may go to a thread pool; see ``games.live.run_sync``); callbacks given to
``on_shutdown`` run in the event loop when the server begins to stop (SIGTERM, SIGINT,
the end of its lifespan), so that open streams can tell their clients to reconnect.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from contextvars import ContextVar

in_async_server: ContextVar[bool] = ContextVar("in_async_server", default=False)

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
