"""The bot caller: one POST to a bot, within its time, through checked connections only.

``AsyncBotCaller.request_move`` makes one call on an asyncio event loop and returns a
``BotAnswer`` (``cardkit.protocol``): the move, or a fault whose reason (``Fault``) the
matches layer stores when the bot forfeits. One loop holds thousands of calls at once
(``bots.calls``' I/O pool); ``BotCaller`` is the same caller for synchronous code (pings,
the kit's checker, calls made in the driver's thread), running it on a loop thread of its
own. Every new connection goes through ``cardkit.urlsafety`` (resolve, refuse, connect to the
very addresses checked); redirects are never followed; the answer is read up to the size
limit and by the call's deadline.

Pure Python, no Django: settings come in as arguments. The bot kit ships it (with
``cardkit.connections``), so that its local arena and checker call HTTP bots exactly as the
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
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

import httpx

from cardkit.connections import BotConnections
from cardkit.http_connection import Answer, Broken, ConnectFailed, TimedOut, TooLarge
from cardkit.protocol import (
    DEFAULT_TIME_LIMIT,
    MAX_RESPONSE_BYTES,
    USER_AGENT,
    BotAnswer,
    Fault,
    build_ping,
    check_move,
    comment_clip,
    signed_headers,
)
from cardkit.urlsafety import UnsafeBotURL


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
_HEADER_LINES = "".join(f"{name}: {value}\r\n" for name, value in _HEADERS.items())


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
    waiting on it is closed, not reused (``cardkit.connections``). Use it from the one loop
    it was first called on.

    ``dumps`` (a request's body, bytes) and ``loads`` (an answer's JSON) default to the
    standard library's; the server's I/O pool passes faster ones that write and read the
    same JSON (``bots.pool``). ``loads`` raises ValueError (or RecursionError) where
    ``json.loads`` would.
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
        dumps: Callable[[Any], bytes] | None = None,
        loads: Callable[[bytes], Any] | None = None,
    ) -> None:
        self.allow_private = allow_private
        self._dumps = dumps or _dumps
        self._loads = loads or json.loads
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
        self._clients: OrderedDict[tuple[str, str], BotConnections] = OrderedDict()

    def _client_for(self, url: str, secret: str) -> BotConnections:
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
            self._clients.popitem(last=False)[1].close()
        return client

    def _client_new(self, url: str) -> BotConnections:
        # No limit on connections at once: a bot in many matches is called for each at
        # once, and a call waiting for a free connection would spend the bot's time.
        return BotConnections(
            url, allow_private=self.allow_private, ssl_context=self._ssl_context,
            keepalive=self._keepalive_per_bot, keepalive_expiry=self._keepalive_expiry,
        )  # fmt: skip

    async def aclose(self) -> None:
        clients = list(self._clients.values())
        self._clients.clear()
        for client in clients:
            client.close()

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
            data, arrived = await self._call(url, secret, payload, time_limit)
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
        # The bot's time ends when its answer arrived, not when the loop got to it.
        return BotAnswer(
            move=move, elapsed=arrived - started, comment=comment_clip(data.get("comment"))
        )

    async def ping(
        self, url: str, secret: str, time_limit: float = DEFAULT_TIME_LIMIT
    ) -> BotAnswer:
        """Send a health check; the answer is ok when the bot says ``{"pong": true}``."""
        started = time.monotonic()
        try:
            data, _arrived = await self._call(url, secret, build_ping(), time_limit)
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
    ) -> tuple[dict, float]:
        """Return the bot's JSON object and when it arrived (time.monotonic()); raise
        _Refused with the fault otherwise."""
        if time_limit <= 0:
            raise ValueError("time_limit must be positive")
        body = self._dumps(payload)
        try:
            # The URL is checked when its bot's connections are made (cardkit.urlsafety).
            client = self._client_for(url, secret)
        except UnsafeBotURL as exc:
            raise _Refused(Fault.UNSAFE_URL, exc.reason) from None
        target = client.target
        signed = "".join(
            f"{name}: {value}\r\n" for name, value in signed_headers(secret, body).items()
        )
        request = (
            f"POST {target.path} HTTP/1.1\r\nHost: {target.authority}\r\n{_HEADER_LINES}"
            f"{signed}Content-Length: {len(body)}\r\n\r\n"
        ).encode("latin-1") + body
        deadline = time.monotonic() + time_limit
        return await self._send_with_retry(client, request, deadline)

    async def _send_with_retry(
        self, client: BotConnections, request: bytes, deadline: float
    ) -> tuple[dict, float]:
        # One retry, and only when no connection was made: the bot cannot have seen the
        # request. A timeout or a bad answer is the bot's, and is never retried.
        for attempt in (1, 2):
            try:
                answer = await client.exchange(request, deadline, self.max_response_bytes)
            except ConnectFailed as exc:
                if attempt == 2 or time.monotonic() >= deadline:
                    raise _Refused(Fault.CONNECTION_ERROR, _describe(exc)) from None
                continue
            except TimedOut:
                raise _Refused(Fault.TIMEOUT, "no answer within the time limit") from None
            except Broken as exc:
                raise _Refused(Fault.CONNECTION_ERROR, _describe(exc)) from None
            except TooLarge as exc:
                raise _Refused(Fault.RESPONSE_TOO_LARGE, str(exc)) from None
            except UnsafeBotURL as exc:
                raise _Refused(Fault.UNSAFE_URL, exc.reason) from None
            body = _checked_body(answer, self.max_response_bytes)
            return _parse_answer(body, self._loads), answer.arrived
        raise AssertionError("unreachable")  # pragma: no cover


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


def _checked_body(answer: Answer, limit: int) -> bytes:
    """The answer's body, or the fault its head shows (``cardkit.http_connection.reads_body``)."""
    status = answer.status
    if 300 <= status < 400:
        where = answer.headers.get("location", "nowhere")
        raise _Refused(
            Fault.REDIRECT, f"HTTP {status} to {_clip(where)}; redirects are not followed"
        )
    if not 200 <= status < 300:
        raise _Refused(Fault.HTTP_STATUS, f"HTTP {status}")
    encoding = answer.headers.get("content-encoding", "identity").strip().lower()
    if encoding != "identity":
        raise _Refused(Fault.MALFORMED_RESPONSE, f"compressed answer ({_clip(encoding)})")
    if answer.body is None:
        raise _Refused(Fault.RESPONSE_TOO_LARGE, f"the answer is longer than {limit} bytes")
    return answer.body


def _dumps(payload: Any) -> bytes:
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


def _parse_answer(content: bytes, loads: Callable[[bytes], Any] = json.loads) -> dict:
    try:
        data = loads(content)
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
