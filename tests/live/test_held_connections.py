"""An open stream holds no connection to Redis of its own.

A stream is opened by a DRF view (its rate limit counted in Redis) run in a live reader
thread. Run in a copy of the stream's context, that view built a cache client of its own
(Django keeps caches in asgiref Locals, a context variable) and the stream kept it, and its
connection to Redis, for as long as it stayed open: 10,000 streams, 10,000 connections.
Here a real uvicorn process on ``cardserver.asgi`` (the test database, the broker's Redis
as cache and pub/sub) holds 4, then 20 streams, and its sockets to Redis are counted.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import httpx
import pytest

from tests import processes
from tests.matches import start_match

pytestmark = [
    pytest.mark.real_services,
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
]

READERS = 2


def redis_sockets(pid: int) -> int:
    """Return how many TCP connections of process ``pid`` go to port 6379."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            target = os.readlink(fd)
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    count = 0
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            fields = line.split()
            remote_port = int(fields[2].rsplit(":", 1)[1], 16)
            if remote_port == 6379 and fields[3] == "01" and fields[9] in inodes:
                count += 1
    return count


def test_open_streams_share_the_readers_redis_connections(tmp_path, user_factory):
    match = start_match([user_factory(username="north"), user_factory(username="south")])
    path = f"/api/v1/matches/{match.pk}/stream/"
    with (
        processes.web_process(tmp_path, LIVE_READ_THREADS=str(READERS)) as (url, process),
        contextlib.ExitStack() as streams,
        httpx.Client(base_url=url, timeout=10) as client,
    ):

        def hold(count: int) -> None:
            for _ in range(count):
                answer = streams.enter_context(client.stream("GET", path))
                assert answer.status_code == 200
                next(answer.iter_lines())  # opened: its first event has come

        hold(4)
        with_four = redis_sockets(process.pid)
        hold(16)
        with_twenty = redis_sockets(process.pid)
    # Each reader thread may make its client once; no stream keeps one of its own.
    assert with_twenty - with_four <= READERS, (with_four, with_twenty)
