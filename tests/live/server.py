"""A real ASGI server for tests: uvicorn serving ``cardserver.asgi`` in a thread.

In the test's own process, so it reads the test database whatever it is (on SQLite a
file: tests/conftest.py) and the test can commit moves that it must then announce;
over real sockets, so streams, keep-alive and disconnects are the server's, not a test
client's. With ``LIVE_PUBSUB_URL`` (the Redis pass) wake-ups go through Redis pub/sub.
The browser tests use it as their ``live_server`` (tests/web/conftest.py), with the
static files served from the apps' folders as pytest-django's own server does.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator

import httpx
import uvicorn

from benchmarks.harness import free_port


def _with_static_files(application):
    """Serve /static/ from the apps' folders (no collectstatic), the rest by ``application``."""
    from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler

    static = ASGIStaticFilesHandler(application)

    async def app(scope, receive, send):
        if scope["type"] == "http" and scope["path"].startswith("/static/"):
            return await static(scope, receive, send)
        return await application(scope, receive, send)

    return app


class LiveServer:
    """uvicorn on ``cardserver.asgi`` in a thread of this process.

    ``send_buffer`` (bytes) caps the kernel's send buffer of every accepted connection
    (they inherit it from the listening socket), as a slow network path would: without it
    the loopback lets a few megabytes wait in the kernel for a client that does not read.
    """

    def __init__(self, *, static_files: bool = False, send_buffer: int | None = None) -> None:
        from django.test.utils import modify_settings

        from cardserver.asgi import application

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        # What pytest-django's live server changes for each test that uses it.
        self._live_server_modified_settings = modify_settings(
            ALLOWED_HOSTS={"append": "127.0.0.1"}
        )
        app = _with_static_files(application) if static_files else application
        config = uvicorn.Config(
            app, host="127.0.0.1", port=self.port, lifespan="on",
            log_level="warning", access_log=False, timeout_graceful_shutdown=5,
        )  # fmt: skip
        self.server = uvicorn.Server(config)
        sockets = None
        if send_buffer is not None:
            listening = socket.socket()
            listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listening.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer)
            listening.bind(("127.0.0.1", self.port))
            listening.listen()
            sockets = [listening]
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": sockets}, daemon=True
        )

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown_streams()
        self.server.should_exit = True
        self.thread.join(10)
        self.close_connections()

    def close_connections(self) -> None:
        """Close the database connections of the server's threads (so that the test database
        can be dropped): one job per thread, held at a barrier until each thread has one."""
        from django.db import connections

        from cardserver.asgi import application
        from cardserver.serving import reader_pool_if_started

        for pool in (application.wsgi.executor, reader_pool_if_started()):
            if pool is None:
                continue
            threads = pool._max_workers
            barrier = threading.Barrier(threads, timeout=5)

            def close(barrier=barrier) -> None:
                connections.close_all()
                with contextlib.suppress(threading.BrokenBarrierError):
                    barrier.wait()

            for future in [pool.submit(close) for _ in range(threads)]:
                future.result(10)

    def shutdown_streams(self) -> None:
        """What SIGTERM does first: tell every open stream to reconnect."""
        from cardserver import serving
        from games import live

        hub = live._hub
        if hub is not None and not hub.loop.is_closed():
            hub.loop.call_soon_threadsafe(serving.shutdown)


def headers_for(token: str | None, **more: str) -> dict[str, str]:
    headers = dict(more)
    if token:
        headers["Authorization"] = f"Token {token}"
    return headers


class EventReader:
    """Read the events of an open SSE or NDJSON response, one at a time, with a timeout."""

    def __init__(self, response: httpx.Response, ndjson: bool = False) -> None:
        self.response = response
        self.ndjson = ndjson
        self.lines = response.iter_lines()

    def next(self) -> dict:
        """Return the next event as ``{"event", "id", "data"}`` (keep-alives skipped)."""
        if self.ndjson:
            for line in self.lines:
                if line.strip():
                    return json.loads(line)
            raise EOFError("the stream ended")
        event: dict = {}
        for line in self.lines:
            if not line:
                if "event" in event:
                    return event
                event = {}
                continue
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "event":
                event["event"] = value
            elif name == "id":
                event["id"] = int(value)
            elif name == "data":
                event["data"] = json.loads(value)
        raise EOFError("the stream ended")

    def until(self, name: str, limit: int = 10_000) -> list[dict]:
        """Return every event up to and including the first named ``name``."""
        seen = []
        for _ in range(limit):
            seen.append(self.next())
            if seen[-1]["event"] == name:
                return seen
        raise AssertionError(f"no {name} event in {limit}")


@contextlib.contextmanager
def open_stream(
    client: httpx.Client, path: str, *, token: str | None = None, ndjson: bool = False,
    last_event_id: int | None = None,
) -> Iterator[EventReader]:
    headers = headers_for(token)
    if ndjson:
        headers["Accept"] = "application/x-ndjson"
    if last_event_id is not None:
        headers["Last-Event-ID"] = str(last_event_id)
    with client.stream("GET", path, headers=headers) as response:
        assert response.status_code == 200, response.read()
        yield EventReader(response, ndjson=ndjson)
