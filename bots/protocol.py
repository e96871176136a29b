"""The HTTP bot protocol: what the server sends a bot, how it signs it, and the call itself.

For every move the server POSTs a JSON request (``build_request``) to the bot's URL and
the bot answers ``{"move": {...}}`` with one of ``legal_moves``. Every request carries
three headers::

    X-Arena-Timestamp:  1746100800                 (Unix seconds)
    X-Arena-Request-Id: 9f0c...                    (unique per request)
    X-Arena-Signature:  sha256=<hex HMAC-SHA256 of "timestamp.request_id.body">

The request id is signed with the body, so a bot that remembers the ids it saw during
the freshness window can refuse a replayed request; a replay with a new id fails the
signature. ``sign`` and ``verify`` are the one implementation used by the server and by
the bot kit (``bots.kit``).

``BotCaller.request_move`` makes one call and returns a ``BotAnswer``: the move, or a
fault whose reason (``Fault``) the matches layer stores when the bot forfeits.

Pure Python, no Django: settings come in as arguments. httpx is needed by ``BotCaller``
only, so the kit's bot server runs on the standard library alone.
"""

from __future__ import annotations

import contextvars
import enum
import hashlib
import hmac
import json
import secrets
import ssl
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from bots.urlsafety import UnsafeBotURL, parse_bot_url, resolve_host

try:
    import httpcore
    import httpx
except ImportError:  # pragma: no cover - the bot kit needs only sign and verify.
    httpcore = httpx = None

PROTOCOL_VERSION = 1

TIMESTAMP_HEADER = "X-Arena-Timestamp"
REQUEST_ID_HEADER = "X-Arena-Request-Id"
SIGNATURE_HEADER = "X-Arena-Signature"
SIGNATURE_PREFIX = "sha256="
# How far a request's timestamp may be from the bot's clock, either way, in seconds.
FRESHNESS_WINDOW = 60

DEFAULT_TIME_LIMIT = 5.0
MAX_RESPONSE_BYTES = 64 * 1024
USER_AGENT = f"cardserver-arena (bot protocol {PROTOCOL_VERSION})"


# -- signatures -----------------------------------------------------------------------


class BadSignature(ValueError):
    """A request whose signature headers are missing, stale or wrong."""


def sign(secret: str, timestamp: str, request_id: str, body: bytes) -> str:
    """Return the ``X-Arena-Signature`` value for a request: ``sha256=<hex>``."""
    message = f"{timestamp}.{request_id}.".encode() + body
    digest = hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()
    return SIGNATURE_PREFIX + digest


def signed_headers(
    secret: str, body: bytes, *, now: float | None = None, request_id: str | None = None
) -> dict[str, str]:
    """Return the three signature headers for ``body``, with a fresh request id."""
    timestamp = str(int(time.time() if now is None else now))
    request_id = request_id or secrets.token_hex(16)
    return {
        TIMESTAMP_HEADER: timestamp,
        REQUEST_ID_HEADER: request_id,
        SIGNATURE_HEADER: sign(secret, timestamp, request_id, body),
    }


def verify(
    secret: str,
    timestamp: str,
    request_id: str,
    body: bytes,
    signature: str,
    *,
    now: float | None = None,
    window: float = FRESHNESS_WINDOW,
) -> None:
    """Raise BadSignature unless ``signature`` signs this request and it is fresh.

    The comparison takes constant time. Remembering request ids against replays within
    the window is the receiver's part (the kit's server does it).
    """
    if not timestamp.isdigit():
        raise BadSignature(f"{TIMESTAMP_HEADER} must be Unix seconds")
    now = time.time() if now is None else now
    if abs(now - int(timestamp)) > window:
        raise BadSignature(f"stale request: {TIMESTAMP_HEADER} is more than {window:g} s off")
    expected = sign(secret, timestamp, request_id, body)
    if not hmac.compare_digest(expected.encode(), signature.encode()):
        raise BadSignature("wrong signature")


def verify_headers(
    secret: str,
    headers: Mapping[str, str],
    body: bytes,
    *,
    now: float | None = None,
    window: float = FRESHNESS_WINDOW,
) -> str:
    """Check a request's signature headers (looked up as given) and return its request id."""
    values = []
    for name in (TIMESTAMP_HEADER, REQUEST_ID_HEADER, SIGNATURE_HEADER):
        value = headers.get(name)
        if not value:
            raise BadSignature(f"missing {name} header")
        values.append(value)
    timestamp, request_id, signature = values
    verify(secret, timestamp, request_id, body, signature, now=now, window=window)
    return request_id


# -- messages -------------------------------------------------------------------------


def build_request(
    *,
    match_id: int | str,
    game: str,
    options: Mapping[str, Any],
    seat: int,
    view: Mapping[str, Any],
    legal_moves: list[dict],
    deadline: datetime,
    time_limit: float,
) -> dict:
    """Return the JSON body asking the bot at ``seat`` for its move.

    ``deadline`` is when the server stops waiting (an aware datetime); ``time_limit`` is
    the same in seconds from now, for bots whose clock is off.
    """
    return {
        "type": "move",
        "protocol": PROTOCOL_VERSION,
        "match_id": match_id,
        "game": game,
        "options": dict(options),
        "seat": seat,
        "view": dict(view),
        "legal_moves": list(legal_moves),
        "deadline": _iso_utc(deadline),
        "time_limit_ms": round(time_limit * 1000),
    }


def move_request(
    *,
    state: Any,
    match_id: int | str,
    game: str,
    options: Mapping[str, Any],
    time_limit: float,
    now: datetime | None = None,
) -> dict:
    """Return the request asking the seat to move in the engine ``state`` for its move.

    The one place where a bot's ``view`` and ``legal_moves`` come from: the server's bot
    turns and the bot kit's local arena and checker all call it, so a bot sees the same
    request from both.
    """
    seat = state.to_move
    now = datetime.now(UTC) if now is None else now
    return build_request(
        match_id=match_id,
        game=game,
        options=options,
        seat=seat,
        view=state.view(seat),
        legal_moves=state.legal_moves(),
        deadline=now + timedelta(seconds=time_limit),
        time_limit=time_limit,
    )


def _iso_utc(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def build_ping() -> dict:
    """Return the JSON body of a health check; a bot answers ``{"pong": true}``."""
    return {"type": "ping", "protocol": PROTOCOL_VERSION}


def check_move(move: Any, legal_moves: list[dict]) -> dict | None:
    """Return the legal move equal to ``move``, or None when ``move`` is not legal.

    Lists in a move are sets of cards (or of covering pairs, each pair in order), so
    ``{"type": "attack", "cards": ["8D", "8C"]}`` equals the legal move with
    ``["8C", "8D"]``. The legal move is returned, in the engine's order of cards. The
    engine's ``state.play`` stays the authority; this lets a caller refuse a move and
    name the fault before touching the match.
    """
    key = _move_key(move)
    if key is None:
        return None
    return next((legal for legal in legal_moves if _move_key(legal) == key), None)


def _move_key(move: Any) -> tuple | None:
    if not isinstance(move, dict):
        return None
    items = []
    for name, value in move.items():
        if isinstance(value, list):
            try:
                value = tuple(sorted(_freeze(v) for v in value))
            except TypeError:  # Elements of mixed types cannot be ordered: not a legal move.
                return None
        items.append((name, value))
    try:
        return tuple(sorted(items))
    except TypeError:
        return None


def _freeze(value: Any) -> Any:
    return tuple(_freeze(v) for v in value) if isinstance(value, list) else value


# -- answers --------------------------------------------------------------------------


class Fault(enum.StrEnum):
    """Why a bot's answer is refused: the bot forfeits with this reason."""

    TIMEOUT = "timeout"
    CONNECTION_ERROR = "connection_error"
    HTTP_STATUS = "http_status"
    REDIRECT = "redirect"
    RESPONSE_TOO_LARGE = "response_too_large"
    MALFORMED_RESPONSE = "malformed_response"
    ILLEGAL_MOVE = "illegal_move"
    UNSAFE_URL = "unsafe_url"


@dataclass(frozen=True, slots=True)
class BotAnswer:
    """The outcome of one call: ``move`` when the bot answered well, else ``fault``.

    ``detail`` is a short text for people (it may quote a few bytes of the bot's answer);
    ``elapsed`` is the call's duration in seconds.
    """

    move: dict | None = None
    fault: Fault | None = None
    detail: str = ""
    elapsed: float = 0.0

    @property
    def ok(self) -> bool:
        return self.fault is None


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
# operation). A context variable, because the pooled streams are shared between calls.
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "bot_call_deadline", default=None
)


class BotCaller:
    """Call bots over pooled keep-alive connections; one caller per process is enough.

    ``allow_private`` comes from the ``BOTS_ALLOW_PRIVATE_URLS`` setting: when False,
    every new connection first resolves the host, refuses it if any address is not
    globally routable, and connects only to the addresses checked. Redirects are never
    followed, and proxies from the environment are ignored. ``verify_tls`` is True (the
    certifi CAs), False, or an SSL context (a private CA, in tests).
    """

    def __init__(
        self,
        *,
        allow_private: bool,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        max_connections: int = 100,
        keepalive_expiry: float = 30.0,
        verify_tls: bool | ssl.SSLContext = True,
    ) -> None:
        if httpx is None:
            raise RuntimeError("BotCaller needs httpx: pip install httpx")
        self.allow_private = allow_private
        self.max_response_bytes = max_response_bytes
        ssl_context = (
            verify_tls
            if isinstance(verify_tls, ssl.SSLContext)
            else httpx.create_ssl_context(verify=verify_tls, trust_env=False)
        )
        transport = httpx.HTTPTransport(verify=ssl_context, trust_env=False)
        # httpx 0.28 offers no argument for a network backend, so the pool is rebuilt with
        # the same settings and the checking backend (pyproject pins httpx below 0.29).
        transport._pool = httpcore.ConnectionPool(
            ssl_context=ssl_context,
            max_connections=max_connections,
            max_keepalive_connections=max_connections,
            keepalive_expiry=keepalive_expiry,
            network_backend=_CheckedBackend(allow_private=allow_private),
        )
        self._client = httpx.Client(
            transport=transport,
            follow_redirects=False,
            trust_env=False,
            headers={
                "User-Agent": USER_AGENT,
                "Content-Type": "application/json",
                "Accept": "application/json",
                # A compressed answer could unpack far past the size limit.
                "Accept-Encoding": "identity",
            },
        )

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> BotCaller:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def request_move(
        self, url: str, secret: str, payload: Mapping[str, Any], time_limit: float
    ) -> BotAnswer:
        """POST ``payload`` (from ``build_request``) to ``url`` and return the bot's answer.

        The whole call, connection and retry included, ends within ``time_limit``
        seconds. When the payload lists ``legal_moves``, a move that is not one of them is
        an ``illegal_move`` fault; a legal move comes back as the engine wrote it.
        """
        started = time.monotonic()
        try:
            data = self._call(url, secret, payload, time_limit)
            move = _read_move(data, payload.get("legal_moves"))
        except _Refused as refused:
            return BotAnswer(
                fault=refused.fault, detail=refused.detail, elapsed=time.monotonic() - started
            )
        return BotAnswer(move=move, elapsed=time.monotonic() - started)

    def ping(self, url: str, secret: str, time_limit: float = DEFAULT_TIME_LIMIT) -> BotAnswer:
        """Send a health check; the answer is ok when the bot says ``{"pong": true}``."""
        started = time.monotonic()
        try:
            data = self._call(url, secret, build_ping(), time_limit)
            if data.get("pong") is not True:
                raise _Refused(Fault.MALFORMED_RESPONSE, 'a ping is answered {"pong": true}')
        except _Refused as refused:
            return BotAnswer(
                fault=refused.fault, detail=refused.detail, elapsed=time.monotonic() - started
            )
        return BotAnswer(elapsed=time.monotonic() - started)

    def _call(self, url: str, secret: str, payload: Mapping[str, Any], time_limit: float) -> dict:
        """Return the bot's JSON object; raise _Refused with the fault otherwise."""
        if time_limit <= 0:
            raise ValueError("time_limit must be positive")
        try:
            parse_bot_url(url)
        except UnsafeBotURL as exc:
            raise _Refused(Fault.UNSAFE_URL, exc.reason) from None
        body = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
        headers = signed_headers(secret, body)
        deadline = time.monotonic() + time_limit
        token = _DEADLINE.set(deadline)
        try:
            return self._send_with_retry(url, body, headers, deadline)
        finally:
            _DEADLINE.reset(token)

    def _send_with_retry(
        self, url: str, body: bytes, headers: dict[str, str], deadline: float
    ) -> dict:
        # One retry, and only when no connection was made: the bot cannot have seen the
        # request. A timeout or a bad answer is the bot's, and is never retried.
        for attempt in (1, 2):
            try:
                return self._send(url, body, headers, deadline)
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

    def _send(self, url: str, body: bytes, headers: dict[str, str], deadline: float) -> dict:
        left = max(deadline - time.monotonic(), 0.001)
        request = self._client.build_request(
            "POST", url, content=body, headers=headers, timeout=httpx.Timeout(left)
        )
        response = self._client.send(request, stream=True)
        try:
            _check_status(response)
            return _parse_answer(_read_body(response, self.max_response_bytes))
        finally:
            response.close()


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


def _read_body(response: httpx.Response, limit: int) -> bytes:
    too_large = _Refused(Fault.RESPONSE_TOO_LARGE, f"the answer is longer than {limit} bytes")
    length = response.headers.get("Content-Length", "")
    if length.isdigit() and int(length) > limit:
        raise too_large
    chunks = []
    size = 0
    for chunk in response.iter_raw():
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


class _CheckedBackend:
    """An httpcore network backend that connects only to checked addresses, by deadline.

    It resolves the host itself, refuses it through ``bots.urlsafety``, and connects to
    the very addresses it checked: the check and the connection cannot see two
    different DNS answers.
    """

    def __init__(self, *, allow_private: bool) -> None:
        self._allow_private = allow_private
        self._inner = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> _DeadlineStream:
        try:
            addresses = resolve_host(
                host,
                port,
                allow_private=self._allow_private,
                timeout=_time_left(timeout, httpcore.ConnectTimeout),
            )
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout(str(exc)) from None
        except OSError as exc:
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from None
        error: Exception | None = None
        for ip, ip_port in addresses:
            try:
                stream = self._inner.connect_tcp(
                    ip,
                    ip_port,
                    timeout=_time_left(timeout, httpcore.ConnectTimeout),
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except httpcore.ConnectError as exc:
                error = exc
                continue
            return _DeadlineStream(stream)
        raise error or httpcore.ConnectError(f"{host} has no address")

    def connect_unix_socket(self, path: str, timeout: Any = None, socket_options: Any = None):
        raise httpcore.ConnectError("bots are reached over TCP only")

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class _DeadlineStream:
    """A network stream whose reads and writes end by the current call's deadline."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _time_left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _time_left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> _DeadlineStream:
        left = _time_left(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname, left))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)
