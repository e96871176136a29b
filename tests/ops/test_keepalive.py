"""A client that reuses a kept-alive connection within seconds never meets a reset.

A server that closes an idle kept-alive connection just as the client sends its next
request on it makes that request fail (a reset, or the connection closed unanswered):
gunicorn's former keep-alive of 2 s did, 3 times in about 19,000 GETs. The web server
(cardserver/gunicorn.py, uvicorn workers) keeps idle connections for 75 s, so the
client, reusing or dropping it within seconds, is always the one to close first.
"""

from __future__ import annotations

import http.client
import subprocess
import sys
import time

from benchmarks.harness import accepts, free_port, stop_process_group, wait_until
from cardserver import gunicorn as gunicorn_conf
from tests.processes import BASE_DIR, clean_environment


def test_idle_connections_are_kept_far_longer_than_a_client_reuses_them():
    assert gunicorn_conf.keepalive >= 60
    assert gunicorn_conf.worker_class == "cardserver.gunicorn.ArenaWorker"


def test_a_connection_reused_after_a_pause_of_seconds_is_answered(tmp_path):
    pause = 3.0  # longer than gunicorn's former 2 s keep-alive
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "python:cardserver.gunicorn",
         "cardserver.asgi:application", "--bind", f"127.0.0.1:{port}", "--workers", "1"],
        cwd=BASE_DIR, env=clean_environment(tmp_path / "var"), start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_until(lambda: accepts(port), timeout=60, what="gunicorn")
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        for _ in range(2):
            connection.request("GET", "/api/v1/games/")
            answer = connection.getresponse()
            answer.read()
            assert answer.status in (200, 503)  # an answer (503: the file is not migrated)
            socket_before = connection.sock
            time.sleep(pause)
            # The same socket, still open at the server: no reconnect, no reset.
            assert connection.sock is socket_before
        connection.close()
    finally:
        stop_process_group(server)
