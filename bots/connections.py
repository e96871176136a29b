"""The bot caller's network backend: connections to checked addresses only, by deadline.

``CheckedBackend`` is the httpcore backend of every ``bots.caller.AsyncBotCaller``
client: it resolves a bot's host itself, refuses what ``bots.urlsafety`` refuses, connects
to the very addresses it checked, and shortens every connect, read and write to the
current call's deadline (``CALL_DEADLINE``). Its streams do TLS in memory over the plain
socket, so that a kept-alive connection with bytes waiting after an answer is seen (and
never reused).

Pure Python, no Django, like the caller.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import socket
import ssl
import time
from typing import Any

import httpcore
from httpcore._utils import is_socket_readable

from bots.urlsafety import literal_address, resolve_host

# The monotonic time by which the current call must end. The network backend
# shortens every connect, read and write to it, so that a bot trickling its answer a byte
# at a time cannot stretch the call past the deadline (httpx's timeouts are per
# operation). A context variable: each call is a task of its own, and the pooled streams
# are shared between one bot's calls.
CALL_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "bot_call_deadline", default=None
)


def _time_left(timeout: float | None, timeout_error: type[Exception]) -> float | None:
    """Return ``timeout`` shortened to the current call's deadline; raise when it passed."""
    deadline = CALL_DEADLINE.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise timeout_error("the deadline passed")
    return left if timeout is None else min(timeout, left)


class CheckedBackend(httpcore.AsyncNetworkBackend):
    """An httpcore network backend that connects only to checked addresses, by deadline.

    It resolves the host itself (in a thread: the C resolver blocks; an address written
    out needs none), refuses it through ``bots.urlsafety``, and connects to the very
    addresses it checked: the check and the connection cannot see two different DNS
    answers. Connections are made and read on the event loop, never a thread per call.
    """

    def __init__(self, *, allow_private: bool) -> None:
        self._allow_private = allow_private

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> _Stream:
        resolve = functools.partial(
            resolve_host,
            host,
            port,
            allow_private=self._allow_private,
            timeout=_time_left(timeout, httpcore.ConnectTimeout),
        )
        try:
            if literal_address(host) is not None:
                addresses = resolve()
            else:
                addresses = await asyncio.get_running_loop().run_in_executor(None, resolve)
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(str(exc)) from None
        except OSError as exc:
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from None
        error: Exception | None = None
        for ip, ip_port in addresses:
            try:
                sock = await _connect(
                    ip, ip_port, _time_left(timeout, httpcore.ConnectTimeout), local_address
                )
            except httpcore.ConnectError as exc:
                error = exc
                continue
            for option in socket_options or ():
                sock.setsockopt(*option)
            return _Stream(sock)
        raise error or httpcore.ConnectError(f"{host} has no address")

    async def connect_unix_socket(
        self, path: str, timeout: Any = None, socket_options: Any = None
    ) -> _Stream:
        raise httpcore.ConnectError("bots are reached over TCP only")

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


# Connections are made by ``socket.create_connection`` (as httpcore's sync backend makes
# them: the one connect that the URL-safety tests watch) in threads of their own, each
# for as long as a connect takes: a call's wait for its bot's answer costs no thread.
_CONNECTS = concurrent.futures.ThreadPoolExecutor(max_workers=256, thread_name_prefix="bot-connect")


async def _connect(ip: str, port: int, timeout: float | None, local_address: str | None):
    """Return a non-blocking socket connected to ``ip`` (written out) within ``timeout``."""
    source = None if local_address is None else (local_address, 0)
    connect = functools.partial(socket.create_connection, (ip, port), timeout, source)
    future = asyncio.get_running_loop().run_in_executor(_CONNECTS, connect)
    try:
        async with asyncio.timeout(timeout):
            sock = await asyncio.shield(future)
    except TimeoutError:
        future.add_done_callback(_close_late_socket)
        raise httpcore.ConnectTimeout(f"connecting to {ip}:{port} timed out") from None
    except OSError as exc:
        raise httpcore.ConnectError(str(exc) or type(exc).__name__) from None
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setblocking(False)
    return sock


def _close_late_socket(future: asyncio.Future) -> None:
    """Close the socket of a connect that ended after its call had given up on it."""
    if not future.cancelled() and future.exception() is None:
        future.result().close()


# What a stream operation that failed otherwise than by its deadline raises.
_FAILED = {
    httpcore.ConnectTimeout: httpcore.ConnectError,
    httpcore.ReadTimeout: httpcore.ReadError,
    httpcore.WriteTimeout: httpcore.WriteError,
}


class _Stream(httpcore.AsyncNetworkStream):
    """A TCP (or TLS) stream read and written on the event loop, each operation by the
    current call's deadline. TLS runs in memory (``ssl.MemoryBIO``) over the socket, so
    that the socket itself shows whether bytes wait on a kept-alive connection."""

    _TLS_RECORD = 16384

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._loop = asyncio.get_running_loop()
        self._tls: ssl.SSLObject | None = None
        self._incoming = self._outgoing = None

    async def _io(self, timeout: float | None, error: type[Exception], work):
        """Run ``work`` (plain socket I/O, or a TLS step and its socket I/O) by the
        deadline, mapping its failures to httpcore's."""
        try:
            async with asyncio.timeout(timeout):
                return await work()
        except TimeoutError:
            raise error("the deadline passed") from None
        except (OSError, ssl.SSLError) as exc:
            raise _FAILED[error](str(exc) or type(exc).__name__) from None

    async def _tls_step(self, step):
        """Run a TLS step, feeding it from the socket and flushing what it wrote, until it
        needs nothing more."""
        while True:
            wants_read = False
            try:
                result = step()
            except ssl.SSLWantReadError:
                wants_read = True
            except ssl.SSLWantWriteError:
                result = None
                wants_read = False
            outgoing = self._outgoing.read()
            if outgoing:
                await self._loop.sock_sendall(self._sock, outgoing)
            if not wants_read:
                return result
            data = await self._loop.sock_recv(self._sock, self._TLS_RECORD)
            if data:
                self._incoming.write(data)
            else:
                self._incoming.write_eof()

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        left = _time_left(timeout, httpcore.ReadTimeout)
        if self._tls is None:
            work = functools.partial(self._loop.sock_recv, self._sock, max_bytes)
        else:
            work = functools.partial(self._tls_step, functools.partial(self._tls.read, max_bytes))
        return await self._io(left, httpcore.ReadTimeout, work)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        left = _time_left(timeout, httpcore.WriteTimeout)

        async def work() -> None:
            if self._tls is None:
                await self._loop.sock_sendall(self._sock, buffer)
                return
            data = memoryview(buffer)
            while data:
                sent = await self._tls_step(functools.partial(self._tls.write, data))
                data = data[sent:]

        await self._io(left, httpcore.WriteTimeout, work)

    async def aclose(self) -> None:
        self._sock.close()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> _Stream:
        left = _time_left(timeout, httpcore.ConnectTimeout)
        self._incoming, self._outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        self._tls = ssl_context.wrap_bio(
            self._incoming, self._outgoing, server_hostname=server_hostname
        )
        await self._io(
            left, httpcore.ConnectTimeout, functools.partial(self._tls_step, self._tls.do_handshake)
        )
        return self

    def get_extra_info(self, info: str) -> Any:
        if info == "ssl_object":
            return self._tls
        if info == "client_addr":
            return self._sock.getsockname()
        if info == "server_addr":
            return self._sock.getpeername()
        if info == "socket":
            return self._sock
        if info == "is_readable":
            # Bytes the TLS layer took in but no one read count as waiting too.
            pending = self._tls is not None and (self._tls.pending() or self._incoming.pending)
            return bool(pending) or is_socket_readable(self._sock)
        return None
