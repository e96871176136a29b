"""The bot caller: one POST to a bot, within its time, through checked connections only.

``AsyncBotCaller.request_move`` makes one call on an asyncio event loop and returns a
``BotAnswer`` (``bots.protocol``): the move, or a fault whose reason (``Fault``) the
matches layer stores when the bot forfeits. One loop holds thousands of calls at once
(``bots.calls``' I/O pool); ``BotCaller`` is the same caller for synchronous code (pings,
the kit's checker, calls made in the driver's thread), running it on a loop thread of its
own. Every new connection goes through ``bots.urlsafety`` (resolve, refuse, connect to the
very addresses checked); redirects are never followed; the answer is read up to the size
limit and by the call's deadline.

Pure Python, no Django: settings come in as arguments. The bot kit does not import this
module (it needs only ``bots.protocol``'s signatures), so it runs without httpx.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import json
import os
import socket
import ssl
import threading
import time
from collections import OrderedDict
from collections.abc import Coroutine, Mapping
from typing import Any

import httpcore
import httpx
from httpcore._utils import is_socket_readable

from bots.protocol import (
    DEFAULT_TIME_LIMIT,
    MAX_RESPONSE_BYTES,
    USER_AGENT,
    BotAnswer,
    Fault,
    build_ping,
    check_move,
    signed_headers,
)
from bots.urlsafety import UnsafeBotURL, literal_address, parse_bot_url, resolve_host


class _Refused(Exception):
    """A fault found while reading an answer; ``BotCaller`` turns it into a BotAnswer."""

    def __init__(self, fault: Fault, detail: str) -> None:
        super().__init__(detail)
        self.fault = fault
        self.detail = detail


# -- the call -------------------------------------------------------------------------

# The monotonic time by which the current call must end. The network backend below
# shortens every connect, read and write to it, so that a bot trickling its answer a byte
# at a time cannot stretch the call past the deadline (httpx's timeouts are per
# operation). A context variable: each call is a task of its own, and the pooled streams
# are shared between one bot's calls.
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "bot_call_deadline", default=None
)

_HEADERS = {
    "User-Agent": USER_AGENT,
    "Content-Type": "application/json",
    "Accept": "application/json",
    # A compressed answer could unpack far past the size limit.
    "Accept-Encoding": "identity",
}


class AsyncBotCaller:
    """Call bots over keep-alive connections from one event loop; one caller per loop.

    ``allow_private`` comes from the ``BOTS_ALLOW_PRIVATE_URLS`` setting: when False,
    every new connection first resolves the host, refuses it if any address is not
    globally routable, and connects only to the addresses checked. Redirects are never
    followed, and proxies from the environment are ignored. ``verify_tls`` is True (the
    certifi CAs), False, or an SSL context (a private CA, in tests).

    Each bot (its URL and secret) has connections of its own, never lent to another bot:
    two bots behind one host and port, one of which writes bytes after its answer, must
    not have those bytes read as the other's answer. A kept-alive connection with bytes
    waiting on it is closed, not reused (httpcore checks it before reuse). Use it from
    the one loop it was first called on.
    """

    def __init__(
        self,
        *,
        allow_private: bool,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        keepalive_per_bot: int = 4,
        keepalive_expiry: float = 30.0,
        max_bots: int = 4096,
        verify_tls: bool | ssl.SSLContext = True,
    ) -> None:
        self.allow_private = allow_private
        self.max_response_bytes = max_response_bytes
        self._keepalive_per_bot = keepalive_per_bot
        self._keepalive_expiry = keepalive_expiry
        self._max_bots = max_bots
        # One SSL context for every bot: building one loads the CA bundle (milliseconds
        # and a few hundred kilobytes each).
        self._ssl_context = (
            verify_tls
            if isinstance(verify_tls, ssl.SSLContext)
            else httpx.create_ssl_context(verify=verify_tls, trust_env=False)
        )
        self._backend = _CheckedBackend(allow_private=allow_private)
        self._clients: OrderedDict[tuple[str, str], httpx.AsyncClient] = OrderedDict()

    def _client_for(self, url: str, secret: str) -> httpx.AsyncClient:
        """Return the bot's own client (its connection pool), made on first use."""
        key = (url, secret)
        client = self._clients.get(key)
        if client is not None:
            self._clients.move_to_end(key)
            return client
        client = self._clients[key] = self._client_new()
        if len(self._clients) > self._max_bots:
            # The least recently called bot's idle connections go; one of its calls
            # still running keeps its connection until it ends.
            self._clients.popitem(last=False)
        return client

    def _client_new(self) -> httpx.AsyncClient:
        transport = httpx.AsyncHTTPTransport(verify=self._ssl_context, trust_env=False)
        # httpx 0.28 offers no argument for a network backend, so the pool is rebuilt with
        # the same settings and the checking backend (pyproject pins httpx below 0.29). No
        # limit on connections at once: a bot in many matches is called for each at once,
        # and a call waiting for a free connection would spend the bot's time.
        transport._pool = httpcore.AsyncConnectionPool(
            ssl_context=self._ssl_context,
            max_connections=None,
            max_keepalive_connections=self._keepalive_per_bot,
            keepalive_expiry=self._keepalive_expiry,
            network_backend=self._backend,
        )
        return httpx.AsyncClient(
            transport=transport, follow_redirects=False, trust_env=False, headers=_HEADERS
        )

    async def aclose(self) -> None:
        clients = list(self._clients.values())
        self._clients.clear()
        for client in clients:
            await client.aclose()

    async def request_move(
        self, url: str, secret: str, payload: Mapping[str, Any], time_limit: float
    ) -> BotAnswer:
        """POST ``payload`` (from ``build_request``) to ``url`` and return the bot's answer.

        The whole call, connection and retry included, ends within ``time_limit``
        seconds. When the payload lists ``legal_moves``, a move that is not one of them is
        an ``illegal_move`` fault; a legal move comes back as the engine wrote it.
        """
        started = time.monotonic()
        try:
            data = await self._call(url, secret, payload, time_limit)
            move = _read_move(data, payload.get("legal_moves"))
        except _Refused as refused:
            return BotAnswer(
                fault=refused.fault, detail=refused.detail, elapsed=time.monotonic() - started
            )
        except RecursionError:
            # JSON nested thousands deep (well within the size limit) exhausts the stack
            # of the parser, or of the move check and quoting after it: the bot's fault.
            return BotAnswer(
                fault=Fault.MALFORMED_RESPONSE,
                detail="the answer is nested too deeply",
                elapsed=time.monotonic() - started,
            )
        return BotAnswer(move=move, elapsed=time.monotonic() - started)

    async def ping(
        self, url: str, secret: str, time_limit: float = DEFAULT_TIME_LIMIT
    ) -> BotAnswer:
        """Send a health check; the answer is ok when the bot says ``{"pong": true}``."""
        started = time.monotonic()
        try:
            data = await self._call(url, secret, build_ping(), time_limit)
            if data.get("pong") is not True:
                raise _Refused(Fault.MALFORMED_RESPONSE, 'a ping is answered {"pong": true}')
        except _Refused as refused:
            return BotAnswer(
                fault=refused.fault, detail=refused.detail, elapsed=time.monotonic() - started
            )
        version = data.get("version")
        return BotAnswer(
            elapsed=time.monotonic() - started,
            version=version[:40] if isinstance(version, str) else "",
        )

    async def _call(
        self, url: str, secret: str, payload: Mapping[str, Any], time_limit: float
    ) -> dict:
        """Return the bot's JSON object; raise _Refused with the fault otherwise."""
        if time_limit <= 0:
            raise ValueError("time_limit must be positive")
        try:
            parse_bot_url(url)
        except UnsafeBotURL as exc:
            raise _Refused(Fault.UNSAFE_URL, exc.reason) from None
        body = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
        headers = signed_headers(secret, body)
        client = self._client_for(url, secret)
        deadline = time.monotonic() + time_limit
        token = _DEADLINE.set(deadline)
        try:
            return await self._send_with_retry(client, url, body, headers, deadline)
        finally:
            _DEADLINE.reset(token)

    async def _send_with_retry(
        self,
        client: httpx.AsyncClient,
        url: str,
        body: bytes,
        headers: dict[str, str],
        deadline: float,
    ) -> dict:
        # One retry, and only when no connection was made: the bot cannot have seen the
        # request. A timeout or a bad answer is the bot's, and is never retried.
        for attempt in (1, 2):
            try:
                return await self._send(client, url, body, headers, deadline)
            except httpx.ConnectError as exc:
                if attempt == 2 or time.monotonic() >= deadline:
                    raise _Refused(Fault.CONNECTION_ERROR, _describe(exc)) from None
            except httpx.TimeoutException:
                raise _Refused(Fault.TIMEOUT, "no answer within the time limit") from None
            except httpx.TransportError as exc:
                raise _Refused(Fault.CONNECTION_ERROR, _describe(exc)) from None
            except httpx.InvalidURL as exc:
                raise _Refused(Fault.UNSAFE_URL, f"not a valid URL: {exc}") from None
            except UnsafeBotURL as exc:
                raise _Refused(Fault.UNSAFE_URL, exc.reason) from None
        raise AssertionError("unreachable")  # pragma: no cover

    async def _send(
        self,
        client: httpx.AsyncClient,
        url: str,
        body: bytes,
        headers: dict[str, str],
        deadline: float,
    ) -> dict:
        left = max(deadline - time.monotonic(), 0.001)
        request = client.build_request(
            "POST", url, content=body, headers=headers, timeout=httpx.Timeout(left)
        )
        response = await client.send(request, stream=True)
        try:
            _check_status(response)
            return _parse_answer(await _read_body(response, self.max_response_bytes))
        finally:
            await response.aclose()


class BotCaller:
    """``AsyncBotCaller`` for synchronous code: each call runs on the caller's own event
    loop thread (started on first use, again after a fork) and blocks until it ends.
    Thread-safe; takes the same arguments. One caller per process is enough."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self.allow_private = options["allow_private"]
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._caller: AsyncBotCaller | None = None
        self._pid = 0

    def _run(self, call: Coroutine) -> Any:
        with self._lock:
            if self._loop is None or self._pid != os.getpid():
                self._caller = AsyncBotCaller(**self._options)
                self._loop, self._pid = loop_thread_start("bot-caller"), os.getpid()
            loop = self._loop
        return asyncio.run_coroutine_threadsafe(call, loop).result()

    def request_move(
        self, url: str, secret: str, payload: Mapping[str, Any], time_limit: float
    ) -> BotAnswer:
        """``AsyncBotCaller.request_move``, waited for."""
        return self._run(self._caller_coroutine("request_move", url, secret, payload, time_limit))

    def ping(self, url: str, secret: str, time_limit: float = DEFAULT_TIME_LIMIT) -> BotAnswer:
        """``AsyncBotCaller.ping``, waited for."""
        return self._run(self._caller_coroutine("ping", url, secret, time_limit))

    async def _caller_coroutine(self, method: str, *args: Any) -> Any:
        # Looked up on the loop: the caller is made with the loop, in _run.
        return await getattr(self._caller, method)(*args)

    def close(self) -> None:
        with self._lock:
            loop, caller, self._loop, self._caller = self._loop, self._caller, None, None
        if loop is None or self._pid != os.getpid():
            return
        asyncio.run_coroutine_threadsafe(caller.aclose(), loop).result()
        loop.call_soon_threadsafe(loop.stop)

    def __enter__(self) -> BotCaller:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def loop_thread_start(name: str) -> asyncio.AbstractEventLoop:
    """Start an event loop (uvloop's where installed) in a daemon thread of its own and
    return it, running."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is a dependency off Windows
        loop = asyncio.new_event_loop()
    else:
        loop = uvloop.new_event_loop()
    started = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        loop.call_soon(started.set)
        loop.run_forever()

    threading.Thread(target=run, name=name, daemon=True).start()
    started.wait()
    return loop


def _check_status(response: httpx.Response) -> None:
    status = response.status_code
    if 300 <= status < 400:
        where = response.headers.get("Location", "nowhere")
        raise _Refused(
            Fault.REDIRECT, f"HTTP {status} to {_clip(where)}; redirects are not followed"
        )
    if not 200 <= status < 300:
        raise _Refused(Fault.HTTP_STATUS, f"HTTP {status}")
    encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
    if encoding != "identity":
        raise _Refused(Fault.MALFORMED_RESPONSE, f"compressed answer ({_clip(encoding)})")


async def _read_body(response: httpx.Response, limit: int) -> bytes:
    too_large = _Refused(Fault.RESPONSE_TOO_LARGE, f"the answer is longer than {limit} bytes")
    length = response.headers.get("Content-Length", "")
    if length.isdigit() and int(length) > limit:
        raise too_large
    chunks = []
    size = 0
    async for chunk in response.aiter_raw():
        size += len(chunk)
        if size > limit:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)


def _parse_answer(content: bytes) -> dict:
    try:
        data = json.loads(content)
    except (UnicodeDecodeError, ValueError) as exc:
        raise _Refused(
            Fault.MALFORMED_RESPONSE, f"the answer is not JSON ({exc}): {_clip(content)}"
        ) from None
    if not isinstance(data, dict):
        raise _Refused(
            Fault.MALFORMED_RESPONSE, f"the answer is not a JSON object: {_clip(content)}"
        )
    return data


def _read_move(data: dict, legal_moves: list[dict] | None) -> dict:
    move = data.get("move")
    if not isinstance(move, dict):
        raise _Refused(
            Fault.MALFORMED_RESPONSE, f'the answer must be {{"move": {{...}}}}, not {_clip(data)}'
        )
    if legal_moves is None:
        return move
    legal = check_move(move, legal_moves)
    if legal is None:
        raise _Refused(Fault.ILLEGAL_MOVE, f"{_clip(move)} is not one of the legal moves")
    return legal


def _describe(exc: Exception) -> str:
    return _clip(str(exc) or type(exc).__name__)


def _clip(value: object, limit: int = 120) -> str:
    text = value if isinstance(value, str) else repr(value)
    if isinstance(value, bytes):
        text = repr(value[: limit + 1])
    return text if len(text) <= limit else text[: limit - 3] + "..."


# -- the network backend --------------------------------------------------------------


def _time_left(timeout: float | None, timeout_error: type[Exception]) -> float | None:
    """Return ``timeout`` shortened to the current call's deadline; raise when it passed."""
    deadline = _DEADLINE.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise timeout_error("the deadline passed")
    return left if timeout is None else min(timeout, left)


class _CheckedBackend(httpcore.AsyncNetworkBackend):
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
