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
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from benchmarks.harness import free_port, stop_process_group, wait_until
from tests.matches import start_match
from tests.processes import BASE_DIR, clean_environment, worker_database_url

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
    port = free_port()
    environment = clean_environment(
        tmp_path,
        DJANGO_SETTINGS_MODULE="cardserver.settings",
        DATABASE_URL=worker_database_url(),
        CELERY_BROKER_URL=os.environ["CELERY_BROKER_URL"],  # the cache's Redis too
        DEBUG="1",
        LOG_LEVEL="WARNING",
        LIVE_READ_THREADS=str(READERS),
    )
    with (tmp_path / "uvicorn.log").open("ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "cardserver.asgi:application", "--host",
             "127.0.0.1", "--port", str(port), "--no-access-log"],
            cwd=BASE_DIR, env=environment, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: _healthy(url), timeout=60, what="uvicorn")
        with contextlib.ExitStack() as streams, httpx.Client(base_url=url, timeout=10) as client:

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
    finally:
        stop_process_group(process)


def _healthy(url: str) -> bool:
    try:
        return httpx.get(f"{url}/api/v1/health/", timeout=5).status_code == 200
    except httpx.HTTPError:
        return False
