"""A bot's side of the HTTP protocol, on the standard library alone.

    from cardkit.server import serve

    def choose(view, legal_moves):
        return legal_moves[0]

    serve(choose, port=9001, secret="the secret shown when the bot was registered")

The server checks every request's signature and freshness, refuses a request id it has
already seen, answers health checks (``{"type": "ping"}``) with ``{"pong": true}``, and
answers a move request with ``{"move": choose(view, legal_moves)}``. ``choose`` may return
``{"move": move, "comment": "why"}`` instead of the move: the comment (at most 1 KB of
UTF-8, cut there) goes with the answer. A bot that needs the whole request
(``cardkit serve cmd:...``) gives ``answer(request) -> move`` instead.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from cardkit.protocol import (
    FRESHNESS_WINDOW,
    PROTOCOL_VERSION,
    BadSignature,
    BotFailed,
    answer_body,
    answer_parts,
    verify_headers,
)

Choose = Callable[[dict, list[dict]], dict]
# A bot that reads the whole move request (cardkit.protocol.build_request) and returns its
# move, or raises BotFailed.
Answer = Callable[[dict], Any]

logger = logging.getLogger(__name__)

# The largest request body read; a view of any position is a few kilobytes.
MAX_REQUEST_BYTES = 1024 * 1024


class ReplayGuard:
    """Remember the request ids seen lately, in bounded memory.

    An id must be remembered for twice the freshness window: a request is fresh while its
    timestamp is within the window of the bot's clock, either way. When more than
    ``max_ids`` ids are that recent, the oldest are forgotten first.
    """

    def __init__(self, *, keep_for: float = 2 * FRESHNESS_WINDOW, max_ids: int = 100_000) -> None:
        self.keep_for = keep_for
        self.max_ids = max_ids
        self._seen: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()

    def first_time(self, request_id: str, now: float | None = None) -> bool:
        """Record ``request_id``; return False when it was seen already (a replay)."""
        now = time.monotonic() if now is None else now
        with self._lock:
            self._forget_before(now - self.keep_for)
            if request_id in self._seen:
                return False
            self._seen[request_id] = now
            while len(self._seen) > self.max_ids:
                self._seen.popitem(last=False)
            return True

    def _forget_before(self, oldest: float) -> None:
        while self._seen:
            request_id, seen_at = next(iter(self._seen.items()))
            if seen_at >= oldest:
                return
            del self._seen[request_id]


class BotServer(ThreadingHTTPServer):
    """An HTTP server that answers the arena's requests with ``choose``."""

    daemon_threads = True

    def __init__(
        self,
        address: tuple[str, int],
        choose: Choose | None,
        secret: str,
        *,
        answer: Answer | None = None,
    ) -> None:
        if not secret:
            raise ValueError("a bot server needs its secret: requests are checked against it")
        if (choose is None) == (answer is None):
            raise ValueError("a bot server needs choose(view, legal_moves) or answer(request)")
        self.answer: Answer = answer or (
            lambda request: choose(request["view"], request["legal_moves"])
        )
        self.secret = secret
        self.replay_guard = ReplayGuard()
        super().__init__(address, BotRequestHandler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # The arena hangs up on a connection it will not reuse (after a fault, or when it
        # stops): not worth a traceback.
        if not isinstance(sys.exception(), ConnectionError):
            super().handle_error(request, client_address)


class BotRequestHandler(BaseHTTPRequestHandler):
    """Answer one connection's requests (kept alive between moves)."""

    server: BotServer
    protocol_version = "HTTP/1.1"
    server_version = f"arena-bot-kit/{PROTOCOL_VERSION}"
    # Headers and body go out as two writes; without this, Nagle's algorithm holds the
    # body until the arena's delayed ACK of the headers, 40 ms later.
    disable_nagle_algorithm = True
    # Close a kept-alive connection that stays idle this long (seconds).
    timeout = 120

    def do_POST(self) -> None:
        body = self._read_body()
        if body is None:
            return
        try:
            request_id = verify_headers(self.server.secret, self.headers, body)
        except BadSignature as exc:
            self._send_json(401, {"error": str(exc)})
            return
        if not self.server.replay_guard.first_time(request_id):
            self._send_json(401, {"error": "replayed request id"})
            return
        request = self._parse(body)
        if request is not None:
            self._answer(request)

    def _read_body(self) -> bytes | None:
        length = self.headers.get("Content-Length", "")
        if not length.isdigit():
            self.close_connection = True
            self._send_json(411, {"error": "Content-Length is required"})
            return None
        if int(length) > MAX_REQUEST_BYTES:
            self.close_connection = True
            self._send_json(413, {"error": f"the body is longer than {MAX_REQUEST_BYTES} bytes"})
            return None
        return self.rfile.read(int(length))

    def _parse(self, body: bytes) -> dict | None:
        try:
            request = json.loads(body)
        except (UnicodeDecodeError, ValueError):
            self._send_json(400, {"error": "the body is not JSON"})
            return None
        if not isinstance(request, dict):
            self._send_json(400, {"error": "the body is not a JSON object"})
            return None
        if request.get("protocol") != PROTOCOL_VERSION:
            self._send_json(400, {"error": f"this bot speaks protocol {PROTOCOL_VERSION}"})
            return None
        return request

    def _answer(self, request: dict) -> None:
        kind = request.get("type")
        if kind == "ping":
            self._send_json(200, {"pong": True})
            return
        view, legal_moves = request.get("view"), request.get("legal_moves")
        if kind != "move" or not isinstance(view, dict) or not isinstance(legal_moves, list):
            self._send_json(400, {"error": "expected a ping or a move request"})
            return
        match_id = request.get("match_id")
        try:
            move = self.server.answer(request)
        except BotFailed as exc:
            # The bot's own fault (a command that wrote no JSON, or exited): one line says it.
            logger.error("match %s: the bot gave no move: %s", match_id, exc)
            self._send_json(500, {"error": str(exc)})
            return
        except Exception:
            # The arena forfeits the bot on a 500; the author needs the traceback.
            logger.exception("choose() failed for match %s", match_id)
            self._send_json(500, {"error": "choose() failed"})
            return
        move, comment = answer_parts(move)
        try:
            content = json.dumps(answer_body(move, comment)).encode()
        except (TypeError, ValueError) as exc:
            logger.error(
                "match %s: the move is not JSON (%s): return one of legal_moves as given",
                match_id, exc,
            )
            self._send_json(500, {"error": "the bot's move is not JSON"})
            return
        self._send_json(200, content)

    def _send_json(self, status: int, data: Any) -> None:
        content = data if isinstance(data, bytes) else json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name.
        logger.info("%s - " + format, self.address_string(), *args)


def make_server(
    choose: Choose | None,
    port: int,
    secret: str,
    host: str = "127.0.0.1",
    *,
    answer: Answer | None = None,
) -> BotServer:
    """Return a bound bot server, not yet serving; ``port=0`` picks a free port.

    Give ``choose(view, legal_moves)``, or ``None`` and ``answer(request)``."""
    return BotServer((host, port), choose, secret, answer=answer)


def serve(choose: Choose, port: int, secret: str, host: str = "127.0.0.1") -> None:
    """Answer the arena's requests with ``choose(view, legal_moves)`` until interrupted.

    The default host only takes connections from this machine; give ``host="0.0.0.0"``
    for an arena elsewhere.
    """
    server = make_server(choose, port, secret, host)
    logger.info("bot listening on http://%s:%s/", *server.server_address[:2])
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
