"""The bot caller's connections: one bot's kept-alive HTTP/1.1 connections, checked, by deadline.

``BotConnections`` holds the connections of one bot (its URL and secret), never lent to
another bot, and makes one exchange on one of them: ``exchange(request, deadline)``
writes the request and returns the answer's status, headers and body. A new connection
resolves the bot's host itself (in a thread: the C resolver blocks; an address written out
needs none), refuses it through ``cardkit.urlsafety``, and connects to the very addresses it
checked: the check and the connection cannot see two different DNS answers. Answers are
parsed by httptools (llhttp, in C) as their bytes arrive on the event loop, on each
connection (``cardkit.http_connection``): no thread and no task of its own per call, and a
kept-alive connection on which bytes arrived after an answer is closed, never reused.

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

from cardkit.http_connection import Answer, ConnectFailed, TimedOut, _Connection
from cardkit.urlsafety import UnsafeBotURL, literal_address, parse_bot_url, resolve_host


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
