"""One timer for every keep-alive wait of a web process (``games.live``'s waiters).

A timer per stream woke the event loop once per stream and keep-alive: 500 times a
second for 10,000 streams waiting 20 s, each turn of the loop taking the interpreter lock
back from the request threads, and each wait leaving a timer handle behind. Here the
waiters due within ``KEEPALIVE_SLACK`` seconds of each other are woken together, by one
timer that ticks while any waiter sleeps on it.

The ticks are short and a turn of the loop wakes at most ``WAKE_BATCH`` waiters: each
keep-alive woken costs the loop some 70 µs (its stream's coroutines, the send), and a
tick once a second woke a whole second's keep-alives at once, 250 of them in a process
holding 5,000 streams, a 17 ms burst in which the loop served no other request (the
tail of a plain GET's latency with 10,000 streams open, ``benchmarks.live``).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict

# A wait ends up to this late (or a tenth of its length, if that is less).
KEEPALIVE_SLACK = 0.1
# Waiters woken in one turn of the event loop at most; the rest in the next turns.
WAKE_BATCH = 50


def wake(woken: asyncio.Future | None) -> None:
    if woken is not None and not woken.done():
        woken.set_result(None)


class SharedTimer:
    """Wake each sleeper's future once its timeout has passed, at the next tick."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        # Per length of wait, the sleepers in the order they fell asleep, which is the
        # order they are due in: a tick looks at the due ones and the next one only.
        self._sleepers: dict[float, OrderedDict[object, tuple[float, asyncio.Future]]] = {}
        self._tick: asyncio.Handle | None = None
        self._every = KEEPALIVE_SLACK

    def sleep(self, sleeper: object, timeout: float, woken: asyncio.Future) -> None:
        """Wake ``woken`` in ``timeout`` seconds (up to ``KEEPALIVE_SLACK`` more)."""
        sleepers = self._sleepers.get(timeout)
        if sleepers is None:
            sleepers = self._sleepers[timeout] = OrderedDict()
        sleepers[sleeper] = (self.loop.time() + timeout, woken)
        every = min(KEEPALIVE_SLACK, timeout / 10)
        if self._tick is None or every < self._every:
            if self._tick is not None:
                self._tick.cancel()
            self._every = every
            self._tick = self.loop.call_later(every, self._wake_due)

    def unsleep(self, sleeper: object, timeout: float) -> None:
        """Forget ``sleeper`` (woken otherwise, or by this timer already)."""
        sleepers = self._sleepers.get(timeout)
        if sleepers is not None:
            sleepers.pop(sleeper, None)

    def sleeping(self) -> int:
        return sum(len(sleepers) for sleepers in self._sleepers.values())

    def _wake_due(self) -> None:
        now = self.loop.time()
        budget = WAKE_BATCH
        for timeout, sleepers in list(self._sleepers.items()):
            while sleepers and budget:
                due, woken = next(iter(sleepers.values()))
                if due > now:
                    break
                sleepers.popitem(last=False)
                wake(woken)
                budget -= 1
            if not sleepers:
                del self._sleepers[timeout]
        if not budget:  # more may be due: after the I/O that waits, in the next turn
            self._tick = self.loop.call_soon(self._wake_due)
            return
        self._tick = None
        if self._sleepers:
            self._every = min(KEEPALIVE_SLACK, min(self._sleepers) / 10)
            self._tick = self.loop.call_later(self._every, self._wake_due)
