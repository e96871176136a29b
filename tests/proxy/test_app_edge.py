"""The web server's own edge, with no proxy in front: the image's server (gunicorn,
uvicorn workers, ``cardserver.asgi``) against clients that send slowly, lie about their
bodies, promise too much or leave. Its timeouts are set to 2 s here (10 s by default) to
keep the tests short; ``python -m benchmarks.edge`` measures the defaults."""

from __future__ import annotations

import socket
import time

import pytest

from benchmarks.edge import HOST, POST, ImageServer, misbehave
from benchmarks.harness import wait_until
from tests.live.server import LiveServer
from tests.processes import clean_environment

TIMEOUT = 2.0


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    variables = {"REQUEST_HEADER_TIMEOUT": str(TIMEOUT), "REQUEST_BODY_TIMEOUT": str(TIMEOUT)}
    folder = tmp_path_factory.mktemp("web")
    with ImageServer(folder, clean_environment(folder, **variables)) as server:
        yield server


def test_headers_sent_a_byte_at_a_time_are_cut_off_after_the_header_timeout(app):
    seen = misbehave(app.port, b"GET /api/v1/games/ HTTP/1.1\r\n" + HOST,
                     trickle=b"X-Slow: " + b"a" * 40, every=0.3)  # fmt: skip

    assert seen.answer == b""
    assert seen.closed_after is not None and TIMEOUT - 0.2 < seen.closed_after < TIMEOUT + 2


def test_a_connection_that_sends_nothing_is_closed_after_the_header_timeout(app):
    seen = misbehave(app.port, b"")

    assert seen.answer == b""
    assert seen.closed_after is not None and TIMEOUT - 0.2 < seen.closed_after < TIMEOUT + 2


def test_a_body_shorter_than_its_content_length_is_answered_408_after_the_body_timeout(app):
    seen = misbehave(app.port, POST + b'Content-Length: 100\r\n\r\n{"username":')

    assert seen.status == 408
    assert seen.json()["error"]["code"] == "request_timeout"
    assert TIMEOUT - 0.2 < seen.answered_after < TIMEOUT + 2
    assert seen.closed_after is not None and seen.closed_after < TIMEOUT + 2


def test_a_body_sent_a_byte_at_a_time_is_answered_408_after_the_body_timeout(app):
    # Each byte comes well within the timeout: the whole body must come within it.
    seen = misbehave(app.port, POST + b"Content-Length: 60\r\n\r\n", trickle=b"x" * 60, every=0.3)

    assert seen.status == 408
    assert TIMEOUT - 0.2 < seen.answered_after < TIMEOUT + 2


def test_a_declared_50_mb_body_is_answered_413_before_a_byte_of_it_is_sent(app):
    seen = misbehave(app.port, POST + b"Content-Length: 52428800\r\n\r\n", limit=5)

    assert seen.status == 413
    assert seen.json()["error"] == {
        "code": "request_too_large",
        "message": "The request body is larger than 65536 bytes.",
        "detail": {"max_bytes": 65536},
    }
    assert seen.answered_after < 1
    assert seen.closed_after is not None and seen.closed_after < 1


def test_a_body_without_a_length_is_answered_413_once_it_goes_over_the_limit(app):
    chunk = b"x" * 8192
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(9))  # 72 KB
    seen = misbehave(app.port, POST + b"Transfer-Encoding: chunked\r\n\r\n" + chunks, limit=5)

    assert seen.status == 413
    assert seen.json()["error"]["code"] == "request_too_large"


# The in-process server (tests/live/server.py): its tasks and connections can be counted.


@pytest.fixture
def server():
    with LiveServer(send_buffer=16_384) as running:
        yield running


def _nothing_left(server: LiveServer) -> bool:
    state = server.server.server_state
    return not state.tasks and not state.connections


@pytest.mark.django_db(transaction=True)
def test_clients_gone_mid_body_leave_no_task_or_connection_behind(server):
    for _ in range(20):
        with socket.create_connection(("127.0.0.1", server.port)) as sock:
            sock.sendall(POST + b"Content-Length: 1000\r\n\r\n" + b"x" * 100)
            time.sleep(0.02)

    wait_until(lambda: _nothing_left(server), timeout=3, what="the server to let them go")


@pytest.mark.django_db(transaction=True)
def test_clients_gone_mid_response_leave_no_task_or_connection_behind(server):
    for _ in range(5):
        with socket.create_connection(("127.0.0.1", server.port)) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.sendall(b"GET /api/v1/schema/ HTTP/1.1\r\n" + HOST + b"\r\n")
            assert sock.recv(1024).startswith(b"HTTP/1.1 200")  # the schema: some 300 KB

    wait_until(lambda: _nothing_left(server), timeout=5, what="the server to let them go")
