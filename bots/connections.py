"""The bot caller's connections: one bot's kept-alive HTTP/1.1 connections, checked, by deadline.

``BotConnections`` holds the connections of one bot (its URL and secret), never lent to
another bot, and makes one exchange on one of them: ``exchange(request, deadline)``
writes the request and returns the answer's status, headers and body. A new connection
resolves the bot's host itself (in a thread: the C resolver blocks; an address written out
needs none), refuses it through ``bots.urlsafety``, and connects to the very addresses it
checked: the check and the connection cannot see two different DNS answers. Answers are
parsed by httptools (llhttp, in C) as their bytes arrive on the event loop: no thread and
no task of its own per call, and a kept-alive connection on which bytes arrived after an
answer is closed, never reused.

A general client (httpcore under httpx) cost about a quarter of the I/O pool's CPU per
call for what a bot call never uses: a bot call is one small POST, answered by at most
``MAX_RESPONSE_BYTES``.

Pure Python, no Django, like the caller.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import select
import socket
import ssl
import time
from collections import deque
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

import httptools

from bots.arrival import stamps_enable, unread_take
from bots.urlsafety import UnsafeBotURL, literal_address, parse_bot_url, resolve_host

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


@dataclass(slots=True)
class _Target:
    """A bot URL read once: where to connect and what to write in the request line."""

    scheme: str
    host: str
    port: int
    # "host" or "host:port", as the Host header and the TLS server name need it.
    authority: str
    path: str

    @classmethod
    def parse(cls, url: str) -> _Target:
        scheme, host, port = parse_bot_url(url)
        try:
            name = host.encode("idna").decode("ascii") if not host.isascii() else host
        except UnicodeError as exc:
            raise UnsafeBotURL(f"not a valid URL: {exc}") from None
        if not name.replace(".", "").replace("-", "").replace("_", "").replace(":", "").isalnum():
            raise UnsafeBotURL(f"not a valid URL: the host {name!r}")
        shown = f"[{name}]" if ":" in name else name
        default = 443 if scheme == "https" else 80
        authority = shown if port == default else f"{shown}:{port}"
        parts = urlsplit(url)
        path = quote(parts.path or "/", safe="/%!$&'()*+,;=:@-._~")
        if parts.query:
            path += "?" + quote(parts.query, safe="/%!$&'()*+,;=:@-._~?")
        return cls(scheme, name, port, authority, path)


class BotConnections:
    """The kept-alive connections of one bot, and its exchanges over them. Use it from
    the one event loop it was first called on."""

    def __init__(
        self,
        url: str,
        *,
        allow_private: bool,
        ssl_context: ssl.SSLContext,
        keepalive: int,
        keepalive_expiry: float,
    ) -> None:
        self.target = _Target.parse(url)
        self._allow_private = allow_private
        self._ssl_context = ssl_context if self.target.scheme == "https" else None
        self._keepalive = keepalive
        self._expiry = keepalive_expiry
        self._idle: deque[_Connection] = deque()

    async def exchange(self, request: bytes, deadline: float, limit: int) -> Answer:
        """Write ``request`` on a kept-alive connection or a new one and return the answer
        (its body read up to ``limit`` bytes), all by ``deadline`` (time.monotonic()).

        Raise ConnectFailed (no connection made), TimedOut, Broken, TooLarge or
        UnsafeBotURL."""
        loop = asyncio.get_running_loop()
        connection = self._idle_take() or await self._connect(deadline)
        waiter = loop.create_future()
        connection.start(waiter, limit)
        connection.transport.write(request)
        timer = loop.call_later(max(deadline - time.monotonic(), 0.0), connection.expire, deadline)
        try:
            answer = await waiter
        except BaseException:
            connection.reusable = False
            connection.transport.abort()
            raise
        finally:
            timer.cancel()
            connection.end()
        if connection.reusable and len(self._idle) < self._keepalive:
            connection.idle_since = time.monotonic()
            self._idle.append(connection)
        else:
            connection.transport.abort()
        return answer

    def close(self) -> None:
        while self._idle:
            self._idle.pop().transport.abort()

    def _idle_take(self) -> _Connection | None:
        """The most recently used connection still fit for a request: open, within its
        keep-alive, and with no bytes waiting on it."""
        now = time.monotonic()
        while self._idle:
            connection = self._idle.pop()
            transport = connection.transport
            if (
                connection.reusable
                and not transport.is_closing()
                and now - connection.idle_since < self._expiry
                and not _readable(transport)
            ):
                return connection
            transport.abort()
        return None

    async def _connect(self, deadline: float) -> _Connection:
        target = self.target
        resolve = functools.partial(
            resolve_host, target.host, target.port, allow_private=self._allow_private,
            timeout=_left(deadline),
        )  # fmt: skip
        try:
            if literal_address(target.host) is not None:
                addresses = resolve()
            else:
                addresses = await asyncio.get_running_loop().run_in_executor(None, resolve)
        except TimeoutError as exc:
            raise TimedOut(str(exc)) from None
        except OSError as exc:
            raise ConnectFailed(f"cannot resolve {target.host}: {exc}") from None
        error: Exception | None = None
        for ip, port in addresses:
            try:
                sock = await _socket_connect(ip, port, _left(deadline))
            except ConnectFailed as exc:
                error = exc
                continue
            return await self._open(sock, deadline)
        raise error or ConnectFailed(f"{target.host} has no address")

    async def _open(self, sock: socket.socket, deadline: float) -> _Connection:
        """Make the connected socket a connection (a TLS one for https, its certificate
        checked against the URL's host name)."""
        loop = asyncio.get_running_loop()
        tls = self._ssl_context
        options = {} if tls is None else {
            "ssl": tls, "server_hostname": self.target.host,
            "ssl_handshake_timeout": max(_left(deadline), 0.001),
        }  # fmt: skip
        try:
            async with asyncio.timeout(_left(deadline)):
                _transport, connection = await loop.create_connection(
                    _Connection, sock=sock, **options
                )
        except TimeoutError:
            sock.close()
            raise TimedOut("the TLS handshake did not end by the deadline") from None
        except (OSError, ssl.SSLError) as exc:
            sock.close()
            raise ConnectFailed(str(exc) or type(exc).__name__) from None
        return connection


def _left(deadline: float) -> float:
    """Seconds to the deadline; raise TimedOut when it passed."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimedOut("the deadline passed")
    return left


def _readable(transport: asyncio.BaseTransport) -> bool:
    """Whether bytes (or the end) wait on the connection's socket, unread."""
    sock = transport.get_extra_info("socket")
    if sock is None:
        return True
    # poll, not select: a pool holding thousands of connections has descriptors past
    # select's 1,024, and a connection that cannot be checked is not reused.
    poller = select.poll()
    try:
        poller.register(sock.fileno(), select.POLLIN)
        return bool(poller.poll(0))
    except (OSError, ValueError):
        return True


# Connections are made by ``socket.create_connection`` (the one connect that the URL-safety
# tests watch) in threads of their own, each for as long as a connect takes: a call's wait
# for its bot's answer costs no thread.
_CONNECTS = concurrent.futures.ThreadPoolExecutor(max_workers=256, thread_name_prefix="bot-connect")


async def _socket_connect(ip: str, port: int, timeout: float) -> socket.socket:
    """Return a non-blocking socket connected to ``ip`` (written out) within ``timeout``."""
    connect = functools.partial(socket.create_connection, (ip, port), timeout)
    future = asyncio.get_running_loop().run_in_executor(_CONNECTS, connect)
    try:
        async with asyncio.timeout(timeout):
            sock = await asyncio.shield(future)
    except TimeoutError:
        future.add_done_callback(_close_late_socket)
        raise TimedOut(f"connecting to {ip}:{port} timed out") from None
    except OSError as exc:
        raise ConnectFailed(str(exc) or type(exc).__name__) from None
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setblocking(False)
    return sock


def _close_late_socket(future: asyncio.Future) -> None:
    """Close the socket of a connect that ended after its call had given up on it."""
    if not future.cancelled() and future.exception() is None:
        future.result().close()
