"""The server side of the HTTP bot protocol, against real HTTP bots on 127.0.0.1.

Every hostile bot must end in a fault with the right reason within the move's time limit.
No Django: run with ``-p no:django --noconftest``.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from bots.caller import BotCaller
from bots.protocol import (
    MAX_RESPONSE_BYTES,
    PROTOCOL_VERSION,
    BadSignature,
    Fault,
    build_ping,
    build_request,
    check_move,
    sign,
    signed_headers,
    verify,
    verify_headers,
)
from games.engine import load_game
from tests.bots.conftest import reply

SECRET = "test-secret"
TIME_LIMIT = 0.5
# How long past the time limit a call may take to come back: thread scheduling only.
SLACK = 0.3

# -- bots on 127.0.0.1 --------------------------------------------------------------------


@dataclass
class Seen:
    """What a test bot received."""

    requests: list[dict] = field(default_factory=list)
    client_ports: set[int] = field(default_factory=set)


Behaviour = Callable[[BaseHTTPRequestHandler, dict], None]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    behaviour: Behaviour
    seen: Seen
    release: threading.Event

    def handle_error(self, request, client_address) -> None:
        pass  # Hostile bots end in reset connections; the tests check what the arena saw.


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = {"path": self.path, "headers": dict(self.headers), "body": body}
        self.server.seen.requests.append(request)
        self.server.seen.client_ports.add(self.client_address[1])
        # The arena hangs up on hostile bots: that is the point of the tests.
        with contextlib.suppress(OSError):
            self.server.behaviour(self, request)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def bot_server() -> Iterator[Callable[[Behaviour], tuple[str, Seen]]]:
    """Return ``start(behaviour, tls=None) -> (url, seen)``: a bot on 127.0.0.1.

    The port is ephemeral; with ``tls`` (a server SSL context) the bot speaks HTTPS.
    """
    servers: list[_Server] = []

    def start(behaviour: Behaviour, tls: ssl.SSLContext | None = None) -> tuple[str, Seen]:
        server = _Server(("127.0.0.1", 0), _Handler)
        if tls is not None:
            server.socket = tls.wrap_socket(server.socket, server_side=True)
        server.behaviour, server.seen, server.release = behaviour, Seen(), threading.Event()
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/move", server.seen

    yield start
    for server in servers:
        server.release.set()
        server.shutdown()
        server.server_close()


@pytest.fixture
def caller() -> Iterator[BotCaller]:
    with BotCaller(allow_private=True) as bot_caller:
        yield bot_caller


def pair_attack(legal_moves: list[dict]) -> dict:
    return next(move for move in legal_moves if len(move.get("cards", ())) == 2)


def answer_pair_reversed(handler: BaseHTTPRequestHandler, request: dict) -> None:
    """Answer like a correct bot: a legal two-card attack, its cards in the other order."""
    verify_headers(SECRET, handler.headers, request["body"])
    move = dict(pair_attack(json.loads(request["body"])["legal_moves"]))
    move["cards"] = list(reversed(move["cards"]))
    reply(handler, json.dumps({"move": move}).encode())


@pytest.fixture
def position():
    """Return a Durak deal's first position, where a two-card attack is legal."""
    return load_game("durak", players=2).deal(seed=1, dealer=0)


def move_request(state) -> dict:
    seat = state.to_move
    return build_request(
        match_id=7,
        game="durak",
        options={"players": 2, "deck_size": 36},
        seat=seat,
        view=state.view(seat),
        legal_moves=state.legal_moves(),
        deadline=datetime.now(UTC) + timedelta(seconds=TIME_LIMIT),
        time_limit=TIME_LIMIT,
    )


def call(caller: BotCaller, url: str, state):
    started = time.monotonic()
    answer = caller.request_move(url, SECRET, move_request(state), TIME_LIMIT)
    assert time.monotonic() - started < TIME_LIMIT + SLACK
    return answer


# -- signatures ---------------------------------------------------------------------------


def test_signature_is_hmac_sha256_of_timestamp_request_id_and_body():
    expected = hmac.new(b"s3cret", b'1700000000.abc.{"a":1}', hashlib.sha256).hexdigest()
    assert sign("s3cret", "1700000000", "abc", b'{"a":1}') == "sha256=" + expected


def test_verify_accepts_a_fresh_signed_request():
    headers = signed_headers(SECRET, b"{}", now=1_700_000_000)
    request_id = verify_headers(SECRET, headers, b"{}", now=1_700_000_030)
    assert request_id == headers["X-Arena-Request-Id"]


def test_each_request_gets_its_own_request_id():
    ids = {signed_headers(SECRET, b"{}")["X-Arena-Request-Id"] for _ in range(10)}
    assert len(ids) == 10


@pytest.mark.parametrize(
    ("secret", "timestamp", "request_id", "body", "message"),
    [
        ("other", "1700000000", "id", b"{}", "wrong signature"),
        (SECRET, "1700000000", "id", b'{"x":1}', "wrong signature"),
        (SECRET, "1700000000", "other-id", b"{}", "wrong signature"),
        (SECRET, "1699999939", "id", b"{}", "stale"),
        (SECRET, "1700000061", "id", b"{}", "stale"),
        (SECRET, "17e8", "id", b"{}", "Unix seconds"),
    ],
    ids=["secret", "body", "request-id", "old", "future", "not-a-number"],
)
def test_verify_refuses_a_request_changed_or_stale(secret, timestamp, request_id, body, message):
    signature = sign(SECRET, timestamp, "id", b"{}")
    with pytest.raises(BadSignature, match=message):
        verify(secret, timestamp, request_id, body, signature, now=1_700_000_000)


def test_verify_headers_refuses_a_missing_header():
    headers = signed_headers(SECRET, b"{}")
    del headers["X-Arena-Signature"]
    with pytest.raises(BadSignature, match="missing X-Arena-Signature"):
        verify_headers(SECRET, headers, b"{}")


# -- messages -----------------------------------------------------------------------------


def test_move_request_carries_everything_the_bot_may_see(position):
    deadline = datetime(2025, 5, 1, 12, 0, 5, 250_000, tzinfo=UTC)
    payload = build_request(
        match_id=7,
        game="durak",
        options={"players": 2},
        seat=0,
        view=position.view(0),
        legal_moves=position.legal_moves(),
        deadline=deadline,
        time_limit=5,
    )
    assert payload["type"] == "move"
    assert payload["protocol"] == PROTOCOL_VERSION
    assert (payload["match_id"], payload["game"], payload["seat"]) == (7, "durak", 0)
    assert payload["view"]["hand"] == position.hand(0)
    assert payload["legal_moves"] == position.legal_moves()
    assert payload["deadline"] == "2025-05-01T12:00:05.250Z"
    assert payload["time_limit_ms"] == 5000
    json.dumps(payload)


def test_check_move_treats_card_sets_in_any_order_as_equal():
    legal = [
        {"type": "attack", "cards": ["8C", "8D"]},
        {"type": "beat", "covers": [["8C", "9C"], ["8D", "6S"]]},
    ]
    assert check_move({"cards": ["8D", "8C"], "type": "attack"}, legal) is legal[0]
    reordered = {"type": "beat", "covers": [["8D", "6S"], ["8C", "9C"]]}
    assert check_move(reordered, legal) is legal[1]


@pytest.mark.parametrize(
    "move",
    [
        {"type": "attack", "cards": ["8C"]},
        {"type": "attack", "cards": ["8C", "8C"]},
        {"type": "attack", "cards": ["8C", "8D"], "extra": 1},
        {"type": "beat", "covers": [["9C", "8C"], ["8D", "6S"]]},
        {"type": "attack", "cards": ["8C", 8]},
        {"type": "take"},
        ["attack", "8C"],
        "take",
        None,
    ],
)
def test_check_move_refuses_anything_not_legal(move):
    legal = [
        {"type": "attack", "cards": ["8C", "8D"]},
        {"type": "beat", "covers": [["8C", "9C"], ["8D", "6S"]]},
    ]
    assert check_move(move, legal) is None


# -- a correct bot ------------------------------------------------------------------------


def test_correct_bot_answers_a_legal_move_that_the_engine_accepts(bot_server, caller, position):
    url, seen = bot_server(answer_pair_reversed)
    answer = call(caller, url, position)
    assert answer.ok, answer
    assert answer.move == pair_attack(position.legal_moves())
    position.play(answer.move)
    assert len(seen.requests) == 1


def test_request_is_signed_json_with_the_protocol_headers(bot_server, caller, position):
    url, seen = bot_server(answer_pair_reversed)
    call(caller, url, position)
    request = seen.requests[0]
    assert request["headers"]["Content-Type"] == "application/json"
    assert request["headers"]["X-Arena-Signature"].startswith("sha256=")
    assert json.loads(request["body"]) | {"deadline": None} == move_request(position) | {
        "deadline": None
    }


def test_connections_are_kept_alive_between_moves(bot_server, caller, position):
    url, seen = bot_server(answer_pair_reversed)
    for _ in range(3):
        assert call(caller, url, position).ok
    assert len(seen.requests) == 3
    assert len(seen.client_ports) == 1


@pytest.fixture
def certificate(tmp_path) -> tuple[str, str]:
    """Return (certificate, key) files of a self-signed certificate for localhost."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"]
        + ["-keyout", str(key), "-out", str(cert), "-subj", "/CN=localhost"]
        + ["-addext", "subjectAltName=DNS:localhost"],
        check=True,
        capture_output=True,
    )
    return str(cert), str(key)


def test_https_bot_is_called_by_name_with_its_certificate_checked(
    bot_server, position, certificate
):
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(*certificate)
    url, seen = bot_server(answer_pair_reversed, tls=server_context)
    tls_url = url.replace("http://127.0.0.1", "https://localhost")
    trusting = ssl.create_default_context(cafile=certificate[0])
    with BotCaller(allow_private=True, verify_tls=trusting) as caller:
        answer = caller.request_move(tls_url, SECRET, move_request(position), TIME_LIMIT)
    assert answer.ok, answer
    with BotCaller(allow_private=True) as caller:
        answer = caller.request_move(tls_url, SECRET, move_request(position), TIME_LIMIT)
    assert answer.fault == Fault.CONNECTION_ERROR
    assert "certificate verify failed" in answer.detail
    assert len(seen.requests) == 1


def test_ping_is_answered_with_pong(bot_server, caller):
    url, seen = bot_server(lambda handler, request: reply(handler, b'{"pong": true}'))
    assert caller.ping(url, SECRET, TIME_LIMIT).ok
    assert json.loads(seen.requests[0]["body"]) == build_ping()


def test_ping_answered_otherwise_is_malformed(bot_server, caller):
    url, _seen = bot_server(lambda handler, request: reply(handler, b'{"move": {}}'))
    assert caller.ping(url, SECRET, TIME_LIMIT).fault == Fault.MALFORMED_RESPONSE


# -- hostile bots -------------------------------------------------------------------------


def sleep_past_deadline(handler: BaseHTTPRequestHandler, request: dict) -> None:
    handler.server.release.wait(5)


def trickle(handler: BaseHTTPRequestHandler, request: dict) -> None:
    handler.send_response(200)
    handler.send_header("Content-Length", "1000")
    handler.end_headers()
    while not handler.server.release.wait(0.1):
        handler.wfile.write(b" ")


def answer_illegal(handler: BaseHTTPRequestHandler, request: dict) -> None:
    reply(handler, b'{"move": {"type": "take"}}')


def answer_10_mib(handler: BaseHTTPRequestHandler, request: dict) -> None:
    reply(handler, b'{"move": "' + b"x" * (10 * 1024 * 1024) + b'"}')


def answer_10_mib_chunked(handler: BaseHTTPRequestHandler, request: dict) -> None:
    handler.send_response(200)
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()
    chunk = b"x" * 65536
    for _ in range(160):
        handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))


def answer_500(handler: BaseHTTPRequestHandler, request: dict) -> None:
    reply(handler, b'{"error": "boom"}', status=500)


def redirect(handler: BaseHTTPRequestHandler, request: dict) -> None:
    if request["path"] == "/move":
        reply(handler, b"", status=307, Location="/elsewhere")
    else:
        answer_pair_reversed(handler, request)


def close_connection(handler: BaseHTTPRequestHandler, request: dict) -> None:
    handler.close_connection = True
    handler.connection.shutdown(socket.SHUT_RDWR)


def answer_gzip(handler: BaseHTTPRequestHandler, request: dict) -> None:
    reply(handler, b"\x1f\x8b", Content_Encoding="gzip")


@pytest.mark.parametrize(
    ("behaviour", "fault"),
    [
        (sleep_past_deadline, Fault.TIMEOUT),
        (trickle, Fault.TIMEOUT),
        (answer_illegal, Fault.ILLEGAL_MOVE),
        (answer_10_mib, Fault.RESPONSE_TOO_LARGE),
        (answer_10_mib_chunked, Fault.RESPONSE_TOO_LARGE),
        (answer_500, Fault.HTTP_STATUS),
        (redirect, Fault.REDIRECT),
        (close_connection, Fault.CONNECTION_ERROR),
        (answer_gzip, Fault.MALFORMED_RESPONSE),
    ],
    ids=lambda value: getattr(value, "__name__", value),
)
def test_hostile_bot_forfeits_within_the_time_limit(bot_server, caller, position, behaviour, fault):
    url, seen = bot_server(behaviour)
    answer = call(caller, url, position)
    assert answer.fault == fault, answer
    assert answer.move is None
    assert answer.detail
    # Never retried, never followed: the bot got exactly the one request.
    assert [r["path"] for r in seen.requests] == ["/move"]


@pytest.mark.parametrize(
    "content",
    [
        b'{"move": ',
        b"not json",
        b"\xff\xfe",
        b"[]",
        b'{"mv": {"type": "take"}}',
        b'{"move": "take"}',
        # Nested past any parser's stack, well within the size limit.
        b'{"move": ' + b"[" * 30_000 + b"]" * 30_000 + b"}",
        b'{"move": {"cards": ' + b"[" * 900 + b"]" * 900 + b"}}",
    ],
    ids=["cut", "text", "bytes", "list", "no-move", "string", "nested-30000", "cards-900"],
)
def test_malformed_answer_forfeits(bot_server, caller, position, content):
    url, _seen = bot_server(lambda handler, request: reply(handler, content))
    answer = call(caller, url, position)
    assert answer.fault == Fault.MALFORMED_RESPONSE, answer


def test_status_fault_names_the_status(bot_server, caller, position):
    url, _seen = bot_server(answer_500)
    assert call(caller, url, position).detail == "HTTP 500"


def test_response_limit_is_64_kib(bot_server, caller, position):
    padding = MAX_RESPONSE_BYTES - len(b'{"move": {"type": "take"}, "p": ""}')
    exactly = b'{"move": {"type": "take"}, "p": "' + b" " * padding + b'"}'
    url, _seen = bot_server(lambda handler, request: reply(handler, exactly))
    assert call(caller, url, position).fault == Fault.ILLEGAL_MOVE
    url, _seen = bot_server(lambda handler, request: reply(handler, exactly + b" "))
    assert call(caller, url, position).fault == Fault.RESPONSE_TOO_LARGE


def test_bytes_one_bot_sends_after_its_answer_never_become_another_bots_answer(
    bot_server, caller, position
):
    """Two owners' bots behind one host and port: ``/m`` writes a second response a moment
    after its answer, on the connection the arena kept alive."""
    legal = position.legal_moves()
    mine, theirs = legal[0], legal[-1]

    def behaviour(handler: BaseHTTPRequestHandler, request: dict) -> None:
        if request["path"] == "/m":
            reply(handler, json.dumps({"move": mine}).encode())
            time.sleep(0.2)
            stale = json.dumps({"move": mine}).encode()
            handler.wfile.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n%s" % (len(stale), stale)
            )
        else:
            reply(handler, json.dumps({"move": theirs}).encode())

    url, seen = bot_server(behaviour)
    base = url.removesuffix("/move")
    assert caller.request_move(base + "/m", SECRET, move_request(position), 2.0).move == mine

    answer = caller.request_move(base + "/v", "other-secret", move_request(position), 2.0)

    assert answer.move == theirs, answer
    assert [r["path"] for r in seen.requests] == ["/m", "/v"]


# -- connection errors and the one retry --------------------------------------------------


@pytest.fixture
def connects(monkeypatch) -> list[tuple]:
    """Record every connection attempt (and still make it)."""
    attempts: list[tuple] = []
    real = socket.create_connection

    def spy(address, *args, **kwargs):
        attempts.append(address)
        return real(address, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", spy)
    return attempts


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_refused_connection_is_retried_once_then_forfeits(caller, position, connects):
    port = closed_port()
    answer = call(caller, f"http://127.0.0.1:{port}/", position)
    assert answer.fault == Fault.CONNECTION_ERROR
    assert connects == [("127.0.0.1", port)] * 2


def test_one_failed_connection_is_forgiven(bot_server, caller, position, monkeypatch):
    url, seen = bot_server(answer_pair_reversed)
    real = socket.create_connection
    failures = [ConnectionRefusedError("refused once")]

    def flaky(address, *args, **kwargs):
        if failures:
            raise failures.pop()
        return real(address, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", flaky)
    assert call(caller, url, position).ok
    assert len(seen.requests) == 1


def test_timeout_is_not_retried(bot_server, caller, position, connects):
    url, seen = bot_server(sleep_past_deadline)
    assert call(caller, url, position).fault == Fault.TIMEOUT
    assert len(connects) == 1
    assert len(seen.requests) == 1


def test_late_answer_does_not_leak_into_the_next_call(bot_server, caller, position):
    def slow_then_fast(handler: BaseHTTPRequestHandler, request: dict) -> None:
        if len(handler.server.seen.requests) == 1:
            time.sleep(TIME_LIMIT + 0.2)
            reply(handler, b'{"move": {"type": "take"}}')
        else:
            answer_pair_reversed(handler, request)

    url, _seen = bot_server(slow_then_fast)
    assert call(caller, url, position).fault == Fault.TIMEOUT
    assert call(caller, url, position).ok


def test_time_limit_must_be_positive(caller, position):
    with pytest.raises(ValueError, match="positive"):
        caller.request_move("http://127.0.0.1:1/", SECRET, move_request(position), 0)
