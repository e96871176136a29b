"""HTTP bots on 127.0.0.1 for the tests of the bot protocol, bot registration and bot turns.

Standard library and the bot kit only at import, so that this file pulls in no Django:
the kit and protocol tests in this folder run without it
(``-p no:django --confcutdir=tests/bots``). The fixtures that need Django or the engine
import them when used.
"""

from __future__ import annotations

import contextlib
import json
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from cardkit import BotServer, make_server

Behaviour = Callable[[BaseHTTPRequestHandler, dict], None]
# The secret the test bots share with the arena.
SECRET = "test-bot-secret"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # socketserver listens with a backlog of 5. When tens of bots of one server are called
    # at once on a loaded machine, the kernel drops the handshakes past it and the client
    # resends after a second: a good bot then "times out" on the test server's account.
    # Real bot servers listen with backlogs in the thousands (uvicorn: 2048).
    request_queue_size = 1024
    behaviour: Behaviour
    requests: list[dict]
    client_ports: set[int]
    release: threading.Event

    def handle_error(self, request, client_address) -> None:
        pass  # Hostile bots end in reset connections; the tests check what the arena saw.


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers["Content-Length"]))
        request = {
            "path": self.path,
            "headers": dict(self.headers),
            "raw": raw,
            "body": json.loads(raw),
        }
        self.server.requests.append(request)
        self.server.client_ports.add(self.client_address[1])
        # The arena hangs up on hostile bots: that is the point of the tests.
        with contextlib.suppress(OSError):
            self.server.behaviour(self, request)

    def log_message(self, format: str, *args: object) -> None:
        pass


def reply(handler: BaseHTTPRequestHandler, content: bytes, status: int = 200, **headers) -> None:
    """Send ``content`` as a JSON answer with ``status`` and extra headers."""
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(content)))
    for name, value in headers.items():
        handler.send_header(name.replace("_", "-"), value)
    handler.end_headers()
    handler.wfile.write(content)


# -- behaviours that several test modules give their bots ---------------------------------


def pong(handler: BaseHTTPRequestHandler, request: dict) -> None:
    """Answer every request like a healthy bot that does not check signatures."""
    reply(handler, b'{"pong": true}')


def first_legal_move(handler: BaseHTTPRequestHandler, request: dict) -> None:
    reply(handler, json.dumps({"move": request["body"]["legal_moves"][0]}).encode())


def sleep_past_deadline(handler: BaseHTTPRequestHandler, request: dict) -> None:
    handler.server.release.wait(5)


def answer_10_mib(handler: BaseHTTPRequestHandler, request: dict) -> None:
    reply(handler, b'{"move": "' + b"x" * (10 * 1024 * 1024) + b'"}')


def answer_500(handler: BaseHTTPRequestHandler, request: dict) -> None:
    reply(handler, b'{"error": "boom"}', status=500)


def close_connection(handler: BaseHTTPRequestHandler, request: dict) -> None:
    handler.close_connection = True
    handler.connection.shutdown(socket.SHUT_RDWR)


# -- fixtures -----------------------------------------------------------------------------


@pytest.fixture
def http_bot() -> Iterator[Callable[..., tuple[str, _Server]]]:
    """Return ``start(behaviour, tls=None) -> (url, server)``: a scripted bot on 127.0.0.1.

    ``behaviour(handler, request)`` answers each POST (``request["body"]`` is the parsed
    JSON, ``request["raw"]`` its bytes); ``server.requests`` lists what the bot received
    and ``server.client_ports`` the ports it was called from; ``server.release`` is set
    when the test ends, to wake a bot that sleeps. With ``tls`` (a server SSL context)
    the bot speaks HTTPS. The port is ephemeral.
    """
    servers: list[_Server] = []

    def start(behaviour: Behaviour, tls: ssl.SSLContext | None = None) -> tuple[str, _Server]:
        server = _Server(("127.0.0.1", 0), _Handler)
        if tls is not None:
            server.socket = tls.wrap_socket(server.socket, server_side=True)
        server.behaviour, server.requests, server.release = behaviour, [], threading.Event()
        server.client_ports = set()
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/move", server

    yield start
    for server in servers:
        server.release.set()
        server.shutdown()
        server.server_close()


@pytest.fixture
def kit_http_bot() -> Iterator[Callable[..., tuple[str, BotServer]]]:
    """Return ``start(secret, choose=first legal move) -> (url, server)``: the bot kit's
    server on 127.0.0.1, checking signatures with ``secret`` (``server.secret`` may be
    changed later, e.g. to the secret a registration returned)."""
    servers: list[BotServer] = []

    def start(secret: str, choose=lambda view, legal_moves: legal_moves[0]):
        server = make_server(choose, 0, secret)
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/", server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture
def no_match_tasks(monkeypatch):
    """Send none of the matches' tasks: a test whose transactions commit would otherwise
    leave them on the broker (Redis in CI) for the workers of later tests."""
    from bots import tasks as bot_tasks
    from games import tasks as match_tasks

    monkeypatch.setattr(bot_tasks.match_turn_started, "delay", lambda *args: None)
    monkeypatch.setattr(
        match_tasks.enforce_move_deadline, "apply_async", lambda *args, **kwargs: None
    )


@pytest.fixture
def caller():
    """Return the arena's bot caller, allowed to call bots on 127.0.0.1."""
    from cardkit.caller import BotCaller

    with BotCaller(allow_private=True) as bot_caller:
        yield bot_caller


@pytest.fixture
def position():
    """Return a Durak deal's first position, where a two-card attack is legal."""
    from cardkit.engine import load_game

    return load_game("durak", players=2).deal(seed=1, dealer=0)


@pytest.fixture
def builtin(db) -> dict:
    """Return the built-in bots by name."""
    from bots import services

    return {bot.name: bot for bot in services.builtin_bots_ensure()}


@pytest.fixture
def http_bot_record(user):
    """Return ``make(url, name="webbot") -> Bot``: an HTTP bot of ``user`` at ``url``,
    signing with ``SECRET``."""
    from bots.models import Bot

    def make(url: str, name: str = "webbot") -> Bot:
        return Bot.objects.create(
            name=name,
            owner=user,
            kind=Bot.Kind.HTTP,
            url=url,
            secret=SECRET,
            games=["durak", "volynshchik"],
        )

    return make


@pytest.fixture
def http_bot_of(user, http_bot):
    """Return ``make(name="hb", behaviour=pong) -> (Bot, secret, server)``: an HTTP bot of
    ``user`` registered through the service."""
    from bots import services

    def make(name: str = "hb", behaviour=pong):
        url, server = http_bot(behaviour)
        bot, secret = services.bot_register(
            owner=user, name=name, kind="http", games=["durak"], url=url
        )
        return bot, secret, server

    return make


# --- Challenges (tests/bots/test_challenge*.py): alice asks, bob owns the bot ------------


def client_of(user):
    """Return a DRF test client signed in with an API token of ``user``."""
    from rest_framework.test import APIClient

    from accounts.tokens import token_create

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_create(user=user)[1]}")
    return client


@pytest.fixture
def alice(user_factory):
    return user_factory(username="alice")


@pytest.fixture
def bob(user_factory):
    return user_factory(username="bob")


@pytest.fixture
def as_alice(alice):
    return client_of(alice)


@pytest.fixture
def as_bob(bob):
    return client_of(bob)


@pytest.fixture
def bobs_bot(bob, kit_http_bot, no_match_tasks):
    """Bob's HTTP bot, the kit's greedy player on 127.0.0.1; the match tasks are not sent
    (the tests play the matches with the driver)."""
    from bots.models import Bot
    from cardkit.serve import load_strategy

    url, _server = kit_http_bot(SECRET, load_strategy("greedy", seed=3))
    return Bot.objects.create(
        name="bobbot", owner=bob, kind=Bot.Kind.HTTP, url=url, secret=SECRET,
        games=["durak", "volynshchik"],
    )  # fmt: skip
