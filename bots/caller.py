"""The bot caller: one POST to a bot, within its time, through checked connections only.

``AsyncBotCaller.request_move`` makes one call on an asyncio event loop and returns a
``BotAnswer`` (``bots.protocol``): the move, or a fault whose reason (``Fault``) the
matches layer stores when the bot forfeits. One loop holds thousands of calls at once
(``bots.calls``' I/O pool); ``BotCaller`` is the same caller for synchronous code (pings,
the kit's checker, calls made in the driver's thread), running it on a loop thread of its
own. Every new connection goes through ``bots.urlsafety`` (resolve, refuse, connect to the
very addresses checked); redirects are never followed; the answer is read up to the size
limit and by the call's deadline.

Pure Python, no Django: settings come in as arguments. The bot kit ships it (with
``bots.connections``), so that its local arena and checker call HTTP bots exactly as the
server does.
"""

from __future__ import annotations

import asyncio
import json
import os
import ssl
import threading
import time
from collections import OrderedDict
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass
from typing import Any

import httpcore
import httpx

from bots.connections import CALL_DEADLINE, CheckedBackend
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
from bots.urlsafety import UnsafeBotURL, parse_bot_url


class _Refused(Exception):
    """A fault found while reading an answer; ``BotCaller`` turns it into a BotAnswer."""

    def __init__(self, fault: Fault, detail: str) -> None:
        super().__init__(detail)
        self.fault = fault
        self.detail = detail


# -- the call -------------------------------------------------------------------------

_HEADERS = {
    "Accept": "application/json",
    # A compressed answer could unpack far past the size limit.
    "Accept-Encoding": "identity",
    "Connection": "keep-alive",
    "User-Agent": USER_AGENT,
    "Content-Type": "application/json",
}


@dataclass(slots=True)
class _Bot:
    """One bot's URL, parsed once, and its connection pool (an httpx transport)."""

    url: httpx.URL
    transport: httpx.AsyncHTTPTransport


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
        self._backend = CheckedBackend(allow_private=allow_private)
        self._clients: OrderedDict[tuple[str, str], _Bot] = OrderedDict()

    def _client_for(self, url: str, secret: str) -> _Bot:
        """Return the bot's own connection pool, made on first use."""
        key = (url, secret)
        client = self._clients.get(key)
        if client is not None:
            self._clients.move_to_end(key)
            return client
        client = self._clients[key] = self._client_new(url)
        if len(self._clients) > self._max_bots:
            # The least recently called bot's idle connections go; one of its calls
            # still running keeps its connection until it ends.
            self._clients.popitem(last=False)
        return client

    def _client_new(self, url: str) -> _Bot:
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
        # Requests go straight to the transport: an httpx client around it would only
        # add what a bot call never uses (redirects, auth, cookies, event hooks), and
        # its layers cost about a seventh of the I/O pool's CPU per call.
        return _Bot(url=httpx.URL(url), transport=transport)

    async def aclose(self) -> None:
        clients = list(self._clients.values())
        self._clients.clear()
        for client in clients:
            await client.transport.aclose()

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
        try:
            client = self._client_for(url, secret)
        except httpx.InvalidURL as exc:
            raise _Refused(Fault.UNSAFE_URL, f"not a valid URL: {exc}") from None
        deadline = time.monotonic() + time_limit
        token = CALL_DEADLINE.set(deadline)
        try:
            return await self._send_with_retry(client, url, body, headers, deadline)
        finally:
            CALL_DEADLINE.reset(token)

    async def _send_with_retry(
        self,
        client: _Bot,
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
        client: _Bot,
        url: str,
        body: bytes,
        headers: dict[str, str],
        deadline: float,
    ) -> dict:
        left = max(deadline - time.monotonic(), 0.001)
        request = httpx.Request(
            "POST", client.url, content=body, headers={**_HEADERS, **headers},
            extensions={"timeout": httpx.Timeout(left).as_dict()},
        )  # fmt: skip
        response = await client.transport.handle_async_request(request)
        response.request = request
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
