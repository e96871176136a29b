"""The arena's bot caller with correct bots on 127.0.0.1: answers, signed requests,
kept-alive connections, HTTPS, pings, and the one retry of a failed connection.

No Django: runs with ``-p no:django --confcutdir=tests/bots``.
"""

from __future__ import annotations

import os
import shutil
import socket
import ssl
import subprocess
import time
from http.server import BaseHTTPRequestHandler

import pytest

from cardkit.caller import BotCaller
from cardkit.protocol import Fault, build_ping
from tests.bots.conftest import SECRET, reply, sleep_past_deadline
from tests.bots.protocol_calls import (
    TIME_LIMIT,
    answer_pair_reversed,
    call,
    move_request,
    pair_attack,
)

# -- a correct bot ------------------------------------------------------------------------


def test_correct_bot_answers_a_legal_move_that_the_engine_accepts(http_bot, caller, position):
    url, server = http_bot(answer_pair_reversed)
    answer = call(caller, url, position)
    assert answer.ok, answer
    assert answer.move == pair_attack(position.legal_moves())
    position.play(answer.move)
    assert len(server.requests) == 1


def test_request_is_signed_json_with_the_protocol_headers(http_bot, caller, position):
    url, server = http_bot(answer_pair_reversed)
    call(caller, url, position)
    request = server.requests[0]
    assert request["headers"]["Content-Type"] == "application/json"
    assert request["headers"]["X-Arena-Signature"].startswith("sha256=")
    assert request["body"] | {"deadline": None} == move_request(position) | {"deadline": None}


def test_connections_are_kept_alive_between_moves(http_bot, caller, position):
    url, server = http_bot(answer_pair_reversed)
    for _ in range(3):
        assert call(caller, url, position).ok
    assert len(server.requests) == 3
    assert len(server.client_ports) == 1


@pytest.fixture
def certificate(tmp_path) -> tuple[str, str]:
    """Return (certificate, key) files of a self-signed certificate for localhost."""
    if shutil.which("openssl") is None:
        # CI's machine has openssl: there the TLS tests must run, not skip.
        if os.environ.get("CI"):
            pytest.fail("the TLS tests need the openssl command, which CI's machine has")
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


def test_https_bot_is_called_by_name_with_its_certificate_checked(http_bot, position, certificate):
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(*certificate)
    url, server = http_bot(answer_pair_reversed, tls=server_context)
    tls_url = url.replace("http://127.0.0.1", "https://localhost")
    trusting = ssl.create_default_context(cafile=certificate[0])
    with BotCaller(allow_private=True, verify_tls=trusting) as caller:
        answer = caller.request_move(tls_url, SECRET, move_request(position), TIME_LIMIT)
    assert answer.ok, answer
    with BotCaller(allow_private=True) as caller:
        answer = caller.request_move(tls_url, SECRET, move_request(position), TIME_LIMIT)
    assert answer.fault == Fault.CONNECTION_ERROR
    assert "certificate verify failed" in answer.detail
    assert len(server.requests) == 1


def test_ping_is_answered_with_pong(http_bot, caller):
    url, server = http_bot(lambda handler, request: reply(handler, b'{"pong": true}'))
    assert caller.ping(url, SECRET, TIME_LIMIT).ok
    assert server.requests[0]["body"] == build_ping()


def test_ping_answered_otherwise_is_malformed(http_bot, caller):
    url, _server = http_bot(lambda handler, request: reply(handler, b'{"move": {}}'))
    assert caller.ping(url, SECRET, TIME_LIMIT).fault == Fault.MALFORMED_RESPONSE


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


def test_one_failed_connection_is_forgiven(http_bot, caller, position, monkeypatch):
    url, server = http_bot(answer_pair_reversed)
    real = socket.create_connection
    failures = [ConnectionRefusedError("refused once")]

    def flaky(address, *args, **kwargs):
        if failures:
            raise failures.pop()
        return real(address, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", flaky)
    assert call(caller, url, position).ok
    assert len(server.requests) == 1


def test_timeout_is_not_retried(http_bot, caller, position, connects):
    url, server = http_bot(sleep_past_deadline)
    assert call(caller, url, position).fault == Fault.TIMEOUT
    assert len(connects) == 1
    assert len(server.requests) == 1


def test_late_answer_does_not_leak_into_the_next_call(http_bot, caller, position):
    def slow_then_fast(handler: BaseHTTPRequestHandler, request: dict) -> None:
        if len(handler.server.requests) == 1:
            time.sleep(TIME_LIMIT + 0.2)
            reply(handler, b'{"move": {"type": "take"}}')
        else:
            answer_pair_reversed(handler, request)

    url, _server = http_bot(slow_then_fast)
    assert call(caller, url, position).fault == Fault.TIMEOUT
    assert call(caller, url, position).ok


def test_time_limit_must_be_positive(caller, position):
    with pytest.raises(ValueError, match="positive"):
        caller.request_move("http://127.0.0.1:1/", SECRET, move_request(position), 0)
