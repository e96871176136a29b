"""HTTP bots on 127.0.0.1 for the tests of bot registration and bot turns.

Standard library only, so that importing this file pulls in no Django (the kit and
protocol tests in this folder run without it too).
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from bots.kit import BotServer, make_server

Behaviour = Callable[[BaseHTTPRequestHandler, dict], None]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    behaviour: Behaviour
    requests: list[dict]
    release: threading.Event

    def handle_error(self, request, client_address) -> None:
        pass  # Hostile bots end in reset connections; the tests check what the arena saw.


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = {"path": self.path, "headers": dict(self.headers), "body": json.loads(body)}
        self.server.requests.append(request)
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


@pytest.fixture
def http_bot() -> Iterator[Callable[[Behaviour], tuple[str, _Server]]]:
    """Return ``start(behaviour) -> (url, server)``: a scripted bot on 127.0.0.1.

    ``behaviour(handler, request)`` answers each POST (``request["body"]`` is the parsed
    JSON); ``server.requests`` lists what the bot received; ``server.release`` is set
    when the test ends, to wake a bot that sleeps.
    """
    servers: list[_Server] = []

    def start(behaviour: Behaviour) -> tuple[str, _Server]:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.behaviour, server.requests, server.release = behaviour, [], threading.Event()
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
