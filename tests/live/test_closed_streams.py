"""A stream that ends leaves little to the garbage collector.

The web process keeps full collections rare (``cardserver/asgi.py``), so what a closed
stream leaves in reference cycles stays, and counts towards the next full collection,
for a long time. Django's disconnect listener raised ``RequestAborted``, which its task
kept and its handler raised again, in a frame that held the task: some 75 objects a
stream (its frames, tasks, request, transport), 150,000 left after 2,000 streams closed.
Here a real uvicorn process on ``cardserver.asgi`` holds 40 streams that its clients then
leave; a full collection in it (``cardserver.gcstats``) while they are open clears what
opening them left, and one after counts what their ends left.
"""

from __future__ import annotations

import contextlib
import json
import socket
import time

import pytest

from tests import processes
from tests.matches import start_match

pytestmark = [
    pytest.mark.real_services,
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
]

STREAMS = 40


def collected_after(directory, name: str, pid: int) -> int:
    """Ask the process for a full collection (``cardserver.gcstats``); return what it freed."""
    (directory / f"census-collect-{name}").touch()
    found = directory / f"census-collect-{name}-{pid}.json"
    deadline = time.monotonic() + 30
    while not found.exists():
        assert time.monotonic() < deadline, "the process wrote no census"
        time.sleep(0.2)
    return json.loads(found.read_text())["collected"]


def test_a_stream_its_client_leaves_is_freed_without_a_full_collection(tmp_path, user_factory):
    match = start_match([user_factory(username="north"), user_factory(username="south")])
    path = f"/api/v1/matches/{match.pk}/stream/"
    stats = tmp_path / "gc"
    stats.mkdir()
    with processes.web_process(
        tmp_path, CARDSERVER_GC_STATS=str(stats), LIVE_MAX_STREAMS_PER_IP="0"
    ) as (url, process):
        host, port = url.removeprefix("http://").split(":")
        with contextlib.ExitStack() as streams:
            for _ in range(STREAMS):
                # Raw sockets: closing one is the client leaving, nothing else.
                sock = streams.enter_context(socket.create_connection((host, int(port))))
                sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
                answer = sock.makefile("rb")
                streams.callback(answer.close)
                assert b" 200 " in answer.readline()
                while answer.readline() not in (b"\r\n", b""):
                    pass
                while b"retry:" not in answer.readline():  # opened: its first event has come
                    pass
            # What opening them left (its views' and serializers' own cycles) goes now.
            collected_after(stats, "open", process.pid)
        time.sleep(2)  # the server sees each client leave and ends its stream
        left = collected_after(stats, "after", process.pid)
    # Some 70 objects a stream before (2,800 here); none now.
    assert left < 5 * STREAMS, left
