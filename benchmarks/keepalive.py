"""Resets on reused keep-alive connections: the web server's shapes side by side.

    python -m benchmarks.keepalive [--seconds 60] [--clients 16] [--pause 1.5-2.5]

Starts gunicorn in each shape (``asgi``: the production one, uvicorn workers with a
keep-alive of 75 s; ``gthread``: the former one, keep-alive 2 s) on a scratch SQLite
file, then, for ``--seconds`` on each, ``--clients`` threads each keep one connection
(http.client) and send ``GET /api/v1/games/`` on it after a random pause in ``--pause``
seconds, the range where a client's reuse races a 2 s keep-alive. A request that fails
on the reused connection (reset, or closed without an answer) is counted, and the client
reconnects. Reported per shape: requests, failures on a reused connection.
"""

from __future__ import annotations

import argparse
import http.client
import random
import sys
import tempfile
import threading
import time

from benchmarks import harness
from benchmarks.api import SHAPES


def measure(port: int, clients: int, seconds: float, pause: tuple[float, float]) -> dict:
    counts = {"requests": 0, "failed_on_reuse": 0}
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client(seed: int) -> None:
        rng = random.Random(seed)
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        reused = False
        while time.monotonic() < stop:
            try:
                connection.request("GET", "/api/v1/games/")
                connection.getresponse().read()
                with lock:
                    counts["requests"] += 1
                reused = True
            except (OSError, http.client.HTTPException):
                with lock:
                    counts["requests"] += 1
                    counts["failed_on_reuse"] += int(reused)
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                reused = False
            time.sleep(rng.uniform(*pause))
        connection.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--pause", default="1.5-2.5")
    args = parser.parse_args()
    pause = tuple(float(x) for x in args.pause.split("-"))
    results = {}
    with tempfile.TemporaryDirectory() as var_dir:
        env = {"CARDSERVER_VAR_DIR": var_dir, "DEBUG": "1", "LOG_LEVEL": "WARNING",
               "PATH": "/usr/bin:/bin"}  # fmt: skip
        for shape in ("asgi", "gthread"):
            port = harness.free_port()
            server = harness.start(
                [sys.executable, "-m", "gunicorn", "-c", "python:cardserver.gunicorn",
                 *SHAPES[shape], "--bind", f"127.0.0.1:{port}", "--workers", "2"],
                env=env, inherit=False,
            )  # fmt: skip
            try:
                harness.wait_until(lambda port=port: harness.accepts(port, timeout=2), timeout=60,
                                   what=f"gunicorn ({shape})")  # fmt: skip
                results[shape] = measure(port, args.clients, args.seconds, pause)
                print(shape, results[shape], flush=True)
            finally:
                harness.stop_process_group(server)
    for shape, got in results.items():
        print(
            f"{shape:8} {got['requests']:6} GETs, pauses {args.pause} s: "
            f"{got['failed_on_reuse']} failed on a reused connection"
        )


if __name__ == "__main__":
    main()
