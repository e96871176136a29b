"""The HTTP bot protocol: what the server sends a bot, how it signs it, what it answers.

For every move the server POSTs a JSON request (``build_request``) to the bot's URL and
the bot answers ``{"move": {...}}`` with one of ``legal_moves``, and may add a short
``"comment"`` saying why (``comment_clip``). Every request carries
three headers::

    X-Arena-Timestamp:  1746100800                 (Unix seconds)
    X-Arena-Request-Id: 9f0c...                    (unique per request)
    X-Arena-Signature:  sha256=<hex HMAC-SHA256 of "timestamp.request_id.body">

The request id is signed with the body, so a bot that remembers the ids it saw during
the freshness window can refuse a replayed request; a replay with a new id fails the
signature. ``sign`` and ``verify`` are the one implementation used by the server and by
the bot kit (``cardkit``).

The call itself (over ``cardkit.connections``' checked connections) is
``cardkit.caller``; it returns a ``BotAnswer``: the move, or a fault whose reason
(``Fault``) the matches layer stores when the bot forfeits.

Pure Python on the standard library and the engine, no Django: the bot kit imports this
module.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

PROTOCOL_VERSION = 1

TIMESTAMP_HEADER = "X-Arena-Timestamp"
REQUEST_ID_HEADER = "X-Arena-Request-Id"
SIGNATURE_HEADER = "X-Arena-Signature"
SIGNATURE_PREFIX = "sha256="
# How far a request's timestamp may be from the bot's clock, either way, in seconds.
FRESHNESS_WINDOW = 60

DEFAULT_TIME_LIMIT = 5.0
MAX_RESPONSE_BYTES = 64 * 1024
# The most UTF-8 bytes of a move's comment (a bot's word on why it chose the move).
MAX_COMMENT_BYTES = 1024
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


def request_timed(request: Mapping[str, Any], *, deadline: datetime, time_limit: float) -> dict:
    """Return ``request`` (from ``build_request``) with its deadline and time limit set anew:
    for a request built before it is sent, whose bot's time starts at the send."""
    return {
        **request,
        "deadline": _iso_utc(deadline),
        "time_limit_ms": round(time_limit * 1000),
    }


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
    # Imported here: the bot kit imports this module and carries no engine (only the
    # server checks a bot's move), and the move's canonical form lives in the engine.
    from cardkit.engine.moves import move_key

    key = move_key(move)
    if key is None:
        return None
    return next((legal for legal in legal_moves if move_key(legal) == key), None)


# -- answers --------------------------------------------------------------------------


def comment_clip(comment: Any) -> str:
    """Return an answer's ``comment`` as the arena keeps it: text cut to at most
    ``MAX_COMMENT_BYTES`` bytes of UTF-8 (never inside a character), without NUL
    characters (which a database's text cannot hold) and with a lone surrogate as "?";
    "" for no comment or one that is not text.

    A bot answering over HTTP is never forfeited for its comment: the move is what the
    match needs, and the comment only explains it. The API, where a client sees its
    error at once, refuses a comment that is too long instead (400).
    """
    if not isinstance(comment, str) or not comment:
        return ""
    data = comment.replace("\x00", "").encode("utf-8", "replace")
    return data[:MAX_COMMENT_BYTES].decode("utf-8", "ignore")


def answer_parts(answer: Any) -> tuple[Any, str]:
    """Split what a bot function returned into its move and its comment.

    A bot returns its move (``{"type": ...}``), or the HTTP answer's shape,
    ``{"move": {...}, "comment": "why"}``: a dict with a ``move`` and no ``type``. The
    comment is clipped (``comment_clip``); the move is returned as given (unchecked).
    """
    if isinstance(answer, dict) and "move" in answer and "type" not in answer:
        return answer["move"], comment_clip(answer.get("comment"))
    return answer, ""


def answer_body(move: Any, comment: str = "") -> dict:
    """Return the JSON answer to a move request: ``{"move": ...}``, with the comment if any."""
    return {"move": move, "comment": comment} if comment else {"move": move}


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


class BotFailed(Exception):
    """A bot run by the kit gave no move: ``fault`` says why, as the arena would name it."""

    def __init__(self, fault: Fault, detail: str) -> None:
        super().__init__(f"{fault}: {detail}")
        self.fault = fault
        self.detail = detail


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
    # A ping answer's "version": the bot's own name for the code answering (or "").
    version: str = ""
    # The answer's "comment", clipped to MAX_COMMENT_BYTES (``comment_clip``), or "".
    comment: str = ""

    @property
    def ok(self) -> bool:
        return self.fault is None
