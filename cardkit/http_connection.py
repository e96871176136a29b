"""One kept-alive HTTP/1.1 connection to a bot, as an asyncio protocol, and its answer.

``cardkit.connections`` opens and keeps these connections, one bot's each; here one
exchange is read: the answer is parsed by httptools (llhttp, in C) as its bytes arrive on
the event loop, bounded in size, and timed out by the call's deadline unless the kernel's
arrival stamps show that its bytes were all in by then. The errors a call can meet, and
the answer it gets, are defined here.

Pure Python, no Django, like the caller.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import httptools

from cardkit.arrival import stamps_enable, unread_take

# Bytes of an answer's status line and headers at most (h11's bound, which the caller had).
MAX_HEAD_BYTES = 16384


class ConnectFailed(Exception):
    """No connection could be made (refused, unreachable, unresolved, TLS handshake
    failed): the bot cannot have seen the request, so it may be tried once more."""


class TimedOut(Exception):
    """The call's deadline passed before the answer was complete."""


class Broken(Exception):
    """The bot closed the connection before its answer was complete, or broke HTTP."""


class TooLarge(Exception):
    """The answer's body is longer than the limit."""


@dataclass(slots=True)
class Answer:
    """An answer's status and headers (names in lower case); its body, or None when it
    was not read (not 2xx, compressed, or announced longer than the limit: the caller
    refuses it from the head alone); and when its last bytes arrived (time.monotonic())."""

    status: int
    headers: dict[str, str]
    body: bytes | None
    arrived: float = 0.0


def reads_body(status: int, headers: dict[str, str], limit: int) -> bool:
    """Whether an answer with this head is worth its body: a bot's fault is seen in it."""
    if not 200 <= status < 300:
        return False
    if headers.get("content-encoding", "identity").strip().lower() != "identity":
        return False
    length = headers.get("content-length", "")
    return not (length.isdigit() and int(length) > limit)


class _Connection(asyncio.Protocol):
    """One TCP (or TLS) connection and the answer being read on it."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.reusable = True
        self.idle_since = 0.0
        self._waiter: asyncio.Future | None = None
        self._parser = httptools.HttpResponseParser(self)
        self._limit = 0
        self._head = self._header_bytes = 0
        self._headers: dict[str, str] = {}
        self._status = 0
        self._chunks: list[bytes] = []
        self._size = 0
        self._reading = False
        self._done = False
        self._fault: Exception | None = None
        # When the bytes being read arrived, if not just now (read by ``expire``).
        self._arrived: float | None = None
        # Whether the kernel stamps the socket's segments (plain TCP on Linux).
        self._stamped = False

    # -- one exchange --------------------------------------------------------------------

    def start(self, waiter: asyncio.Future, limit: int) -> None:
        self._waiter, self._limit = waiter, limit
        self._head, self._header_bytes, self._headers, self._status = 0, 0, {}, 0
        self._chunks, self._size, self._done, self._fault = [], 0, False, None
        self._reading, self._arrived = False, None

    def end(self) -> None:
        self._waiter = None

    def expire(self, deadline: float) -> None:
        """The call's timer: time the answer out, unless its bytes had all arrived by
        ``deadline`` (time.monotonic()) and only the loop had not read them yet.

        libuv runs due timers before it polls for I/O, so a loop that stalled (waiting for
        the GIL behind the recording threads) past a deadline would otherwise count its own
        stall against a bot that answered in time. The kernel's arrival stamps say when the
        bytes came; a TLS connection's cannot be read past its transport, and is judged as
        before, by the timer alone. The other way round, an answer that the loop read
        after the deadline but before its timer ran (a stall just before the loop polled)
        is taken as on time, its think time as read: nothing tells when it came."""
        waiter = self._waiter
        if waiter is None or waiter.done():
            return
        if self._stamped:
            self._read_arrived(deadline)
        if not waiter.done():
            waiter.set_exception(TimedOut("no answer within the time limit"))

    def _settle(self) -> None:
        waiter = self._waiter
        if waiter is None or waiter.done():
            return
        if self._fault is not None:
            self.reusable = False
            waiter.set_exception(self._fault)
        elif self._done:
            body = b"".join(self._chunks) if self._reading else None
            if body is None:
                self.reusable = False
            arrived = self._arrived if self._arrived is not None else time.monotonic()
            waiter.set_result(Answer(self._status, self._headers, body, arrived))
        else:
            return
        # A kept-alive connection waits for its next call without the answer's bytes: up
        # to the size limit each, times a few connections a bot, times thousands of bots.
        self._chunks = []

    # -- asyncio.Protocol ----------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None and transport.get_extra_info("sslcontext") is None:
            self._stamped = stamps_enable(sock)

    def _read_arrived(self, deadline: float) -> None:
        """Parse what waits unread in the socket as if the loop had read it when it
        arrived, if that was by ``deadline``."""
        unread = unread_take(
            self.transport.get_extra_info("socket").fileno(), MAX_HEAD_BYTES + self._limit + 1
        )
        if unread is None:
            return
        if unread.arrived is None or unread.arrived > deadline:
            # Late (or not stamped): the timer's judgement stands, and the connection,
            # whose bytes were taken from its transport, is not used again.
            self.reusable = False
            return
        self._arrived = unread.arrived
        if unread.data:
            self.data_received(unread.data)
        if unread.ended:
            self.connection_lost(None)

    def data_received(self, data: bytes) -> None:
        if self._waiter is None or self._waiter.done() or self._done:
            # Bytes nobody asked for (after an answer): never read as the next answer.
            self.reusable = False
            self.transport.abort()
            return
        if not self._status:
            # What came before the head ended: an endless head never ends.
            self._head += len(data)
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._fault = Broken("the bot upgraded the connection")
        except httptools.HttpParserError as exc:
            if self._done:
                # Bytes after the answer: the connection is not reused.
                self.reusable = False
            elif self._fault is None:
                self._fault = Broken(f"the answer is not HTTP/1.1 ({exc})")
        if not self._status and self._head > MAX_HEAD_BYTES and self._fault is None:
            self._fault = Broken(f"the answer's head is longer than {MAX_HEAD_BYTES} bytes")
        self._settle()

    def eof_received(self) -> bool:
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.reusable = False
        if self._waiter is None or self._waiter.done():
            return
        if self._reading and self._close_delimited():
            # An answer with neither a length nor chunks ends where its connection does.
            self._done = True
        elif not self._done and self._fault is None:
            said = "without answering" if not self._status else "before its answer ended"
            self._fault = Broken(f"the bot closed the connection {said}")
        self._settle()

    def _close_delimited(self) -> bool:
        return (
            "content-length" not in self._headers
            and "chunked" not in self._headers.get("transfer-encoding", "").lower()
        )

    # -- httptools' callbacks -------------------------------------------------------------

    def on_message_begin(self) -> None:
        if self._done:
            self.reusable = False

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._done:
            return
        # A head that arrives whole in one read is counted here, header by header.
        self._header_bytes += len(name) + len(value) + 4
        if self._header_bytes > MAX_HEAD_BYTES and self._fault is None:
            self._fault = Broken(f"the answer's head is longer than {MAX_HEAD_BYTES} bytes")
            self._done = True
            return
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1")
        self._headers[key] = f"{self._headers[key]}, {text}" if key in self._headers else text

    def on_headers_complete(self) -> None:
        if self._done:
            return
        status = self._parser.get_status_code()
        if 100 <= status < 200:
            # An informational answer (100 Continue): the real one follows.
            self._headers = {}
            return
        self._status = status
        self._reading = reads_body(status, self._headers, self._limit)
        if not self._reading:
            self._done = True

    def on_body(self, body: bytes) -> None:
        if not self._reading or self._done:
            return
        self._size += len(body)
        if self._size > self._limit:
            self._fault = TooLarge(f"the answer is longer than {self._limit} bytes")
            self._done = True
            return
        self._chunks.append(body)

    def on_message_complete(self) -> None:
        if not self._status or self._done:
            return
        self._done = True
        if not self._parser.should_keep_alive():
            self.reusable = False
