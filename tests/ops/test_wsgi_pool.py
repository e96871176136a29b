"""The sync site's bridge from the event loop to its thread pool (``cardserver.wsgi_pool``).

A real uvicorn serves a small WSGI application through ``WSGIPool``: request bodies
sent in pieces, one larger than what is kept in memory, responses larger than what is
held before sending, and the response closed in the thread that ran the application
(Django's ``request_finished`` keeps or closes that thread's database connection), and
what Django keeps per thread (its caches, their Redis connections) kept across requests.
"""

from __future__ import annotations

import hashlib
import threading
import time

import httpx
import pytest
import uvicorn
from django.core.cache import caches

from benchmarks.harness import free_port
from cardserver.wsgi_pool import WSGIPool

BUFFER = 64 * 1024


class Recorded:
    """What the application saw, for the test to read."""

    def __init__(self) -> None:
        self.ran_in: list[int] = []
        self.closed_in: list[int] = []
        self.caches: list[tuple[int, object]] = []


def _application(recorded: Recorded):
    def app(environ, start_response):
        recorded.ran_in.append(threading.get_ident())
        if environ["PATH_INFO"] == "/cache":
            recorded.caches.append((threading.get_ident(), caches["default"]))
            start_response("204 No Content", [])
            return Closing([], recorded)
        if environ["PATH_INFO"] == "/echo":
            body = environ["wsgi.input"].read()
            start_response("200 OK", [("Content-Type", "text/plain")])
            answer = f"{len(body)} {hashlib.sha256(body).hexdigest()}".encode()
            return Closing([answer], recorded)
        size = int(environ["QUERY_STRING"])
        start_response("200 OK", [("Content-Type", "application/octet-stream")])
        return Closing((bytes([n % 251]) * 4096 for n in range(size // 4096)), recorded)

    return app


class Closing:
    """A WSGI response whose ``close`` records the thread it runs in."""

    def __init__(self, chunks, recorded: Recorded) -> None:
        self.chunks, self.recorded = chunks, recorded

    def __iter__(self):
        return iter(self.chunks)

    def close(self) -> None:
        self.recorded.closed_in.append(threading.get_ident())


@pytest.fixture
def served():
    recorded = Recorded()
    pool = WSGIPool(_application(recorded), threads=2, buffer_bytes=BUFFER, spool_bytes=BUFFER)
    port = free_port()
    config = uvicorn.Config(pool, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
            yield client, recorded
    finally:
        server.should_exit = True
        thread.join(10)
        pool.executor.shutdown()


@pytest.mark.parametrize("size", [10, BUFFER - 1, 3 * BUFFER + 17])
def test_a_body_sent_in_pieces_arrives_whole(served, size):
    client, _ = served
    body = bytes(range(256)) * (size // 256) + b"x" * (size % 256)

    def pieces():
        for start in range(0, len(body), 5000):
            yield body[start : start + 5000]

    answer = client.post("/echo", content=pieces())  # chunked: several ASGI messages
    assert answer.status_code == 200
    assert answer.text == f"{len(body)} {hashlib.sha256(body).hexdigest()}"


@pytest.mark.parametrize("size", [4096, BUFFER, 20 * BUFFER])
def test_a_response_of_any_size_arrives_whole(served, size):
    client, recorded = served
    answer = client.get(f"/blob?{size}")
    assert answer.status_code == 200
    expected = b"".join(bytes([n % 251]) * 4096 for n in range(size // 4096))
    assert answer.content == expected
    assert recorded.closed_in == recorded.ran_in  # closed once, in the application's thread


def test_a_thread_keeps_its_caches_from_one_request_to_the_next(served):
    """As in a gthread worker: a cache (for Redis, its client and connection) is made once a
    thread, not once a request."""
    client, recorded = served
    for _ in range(8):
        assert client.get("/cache").status_code == 204
    by_thread: dict[int, set[int]] = {}
    for thread, cache in recorded.caches:
        by_thread.setdefault(thread, set()).add(id(cache))
    assert len(recorded.caches) == 8
    assert all(len(made) == 1 for made in by_thread.values()), by_thread
