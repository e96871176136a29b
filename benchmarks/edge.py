"""How long slow and lying clients are held, by the app alone and behind nginx.

    python -m benchmarks.edge [--json]

Starts the web server as the image runs it (its CMD: gunicorn, uvicorn workers,
``cardserver.asgi``; SQLite in a temporary folder, the timeouts at their defaults) and
nginx in front of it (``scripts/proxy``), then sends each of them, all at once, clients
that misbehave over raw sockets: headers a byte at a time, a connection that sends
nothing, a body shorter than its ``Content-Length``, a body a byte at a time, a declared
50 MB body, a chunked body over the limit. Prints when each was answered and when its
connection was closed. The parts (``ImageServer``, ``Proxy``, ``misbehave``) are the
proxy tests' too (tests/proxy/).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import select
import shutil
import socket
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from benchmarks.compose import BASE_DIR, image_command
from benchmarks.harness import accepts, answers, free_port, start, stop_process_group, wait_until

PROXY_SCRIPT = BASE_DIR / "scripts" / "proxy"


def nginx_path() -> str | None:
    """Return the path of Debian's nginx, or None if it is not installed."""
    for path in ("/usr/sbin/nginx", "/usr/local/sbin/nginx"):
        if os.access(path, os.X_OK):
            return path
    return None


@dataclass
class Outcome:
    """What a raw client saw: the bytes answered, and when (seconds after it connected)
    the first of them came and the server closed the connection (None: never)."""

    answer: bytes
    answered_after: float | None
    closed_after: float | None

    @property
    def status(self) -> int | None:
        return int(self.answer.split(b" ", 2)[1]) if self.answer.startswith(b"HTTP/") else None

    def json(self) -> dict:
        head, _, body = self.answer.partition(b"\r\n\r\n")
        if b"transfer-encoding: chunked" in head.lower():
            body = body.split(b"\r\n", 1)[1].rsplit(b"\r\n0\r\n", 1)[0]
        return json.loads(body)


def misbehave(port: int, head: bytes, *, trickle: bytes = b"", every: float = 0.5,
              limit: float = 20.0, leave_after: float | None = None) -> Outcome:  # fmt: skip
    """Connect to 127.0.0.1:``port``, send ``head``, then ``trickle`` a byte every ``every``
    seconds, reading all the while, until the server closes the connection, ``leave_after``
    seconds (the client leaves) or ``limit`` seconds have passed."""
    sock = socket.create_connection(("127.0.0.1", port))
    started = time.monotonic()
    answer, answered = b"", None
    pending = bytearray(trickle)
    next_send = started + every
    end = started + (leave_after if leave_after is not None else limit)
    try:
        sock.sendall(head)
        while (now := time.monotonic()) < end:
            wake = min(next_send, end) if pending else end
            readable, _, _ = select.select([sock], [], [], max(0.0, wake - now))
            now = time.monotonic()
            if readable:
                try:
                    chunk = sock.recv(65536)
                except ConnectionResetError:
                    chunk = b""
                if not chunk:
                    return Outcome(answer, answered, now - started)
                answer += chunk
                answered = answered if answered is not None else now - started
            elif pending and now >= next_send:
                try:
                    sock.send(bytes(pending[:1]))
                except OSError:
                    return Outcome(answer, answered, now - started)
                del pending[:1]
                next_send += every
        return Outcome(answer, answered, None)
    finally:
        sock.close()


class ImageServer:
    """The web server as the image runs it (its CMD: gunicorn, uvicorn workers,
    ``cardserver.asgi``), one worker, on a port of 127.0.0.1, in ``environment`` (the
    settings variables; its data in ``var_dir``) with production's settings; its log lines
    (JSON, the access log's included) in ``log``."""

    def __init__(self, var_dir: Path, environment: dict[str, str]) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = var_dir / "web.log"
        environment = {
            **environment, "CARDSERVER_VAR_DIR": str(var_dir), "DEBUG": "0",
            "SECRET_KEY": "edge-" + "x" * 45, "ALLOWED_HOSTS": "127.0.0.1",
            "SECURE_SSL_REDIRECT": "0", "WEB_CONCURRENCY": "1", "LOG_FORMAT": "json",
            "PATH": f"{Path(sys.executable).parent}:{environment.get('PATH', '')}",
        }  # fmt: skip
        self.environment = environment
        self.command = [
            a.replace("0.0.0.0:8000", f"127.0.0.1:{self.port}") for a in image_command()
        ]

    def __enter__(self) -> ImageServer:
        # The app's defaults: the settings variables of this shell are not passed on.
        self.process = start(self.command, env=self.environment, inherit=False, log=self.log)
        wait_until(lambda: answers(f"{self.url}/api/v1/games/", status=None, timeout=2),
                   timeout=60, what="the web server")  # fmt: skip
        return self

    def __exit__(self, *exc) -> None:
        stop_process_group(self.process)

    def requests_logged(self) -> list[dict]:
        """The access-log lines written so far."""
        lines = [
            json.loads(line) for line in self.log.read_text().splitlines() if line.startswith("{")
        ]
        return [line for line in lines if line.get("logger") == "gunicorn.access"]


class Proxy:
    """``scripts/proxy`` (Debian's nginx with docker/nginx/'s configuration) on a port of
    127.0.0.1 in front of ``upstream``; its access log (stdout) in ``log``."""

    def __init__(self, upstream: str, log: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.command = [sys.executable, str(PROXY_SCRIPT), "--listen",
                        f"127.0.0.1:{self.port}", "--upstream", upstream]  # fmt: skip
        self.log = log

    def __enter__(self) -> Proxy:
        self.process = start(self.command, env={}, log=self.log,
                             errors=self.log.with_suffix(".err"))  # fmt: skip
        wait_until(lambda: accepts(self.port) or self.process.poll() is not None,
                   timeout=20, what="nginx")  # fmt: skip
        assert self.process.poll() is None, self.log.with_suffix(".err").read_text()
        return self

    def __exit__(self, *exc) -> None:
        stop_process_group(self.process)

    def lines_logged(self) -> list[dict]:
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.strip()]


HOST = b"Host: 127.0.0.1\r\n"
POST = b"POST /api/v1/accounts/token/ HTTP/1.1\r\n" + HOST + b"Content-Type: application/json\r\n"
CHUNK = b"x" * 8192
# Each misbehaving client: what it sends at once, then a byte at a time (every 0.5 s).
CLIENTS = {
    "headers a byte at a time": (
        b"GET /api/v1/games/ HTTP/1.1\r\n" + HOST, b"X-Slow: " + b"a" * 120
    ),
    "nothing sent": (b"", b""),
    "body shorter than Content-Length": (POST + b'Content-Length: 100\r\n\r\n{"username":', b""),
    "body a byte at a time (60 B)": (POST + b"Content-Length: 60\r\n\r\n", b"x" * 60),
    "declared 50 MB body": (POST + b"Content-Length: 52428800\r\n\r\n", b""),
    "chunked body over the limit": (
        POST + b"Transfer-Encoding: chunked\r\n\r\n"
        + b"".join(b"%x\r\n%s\r\n" % (len(CHUNK), CHUNK) for _ in range(9)), b"",
    ),
}  # fmt: skip


def measure(ports: dict[str, int], limit: float) -> dict[str, dict[str, Outcome]]:
    """Send every client of ``CLIENTS`` to every port of ``ports`` at once; return what each saw."""
    seen: dict[str, dict[str, Outcome]] = {name: {} for name in CLIENTS}

    def one(client: str, target: str) -> None:
        head, trickle = CLIENTS[client]
        seen[client][target] = misbehave(ports[target], head, trickle=trickle, limit=limit)

    threads = [threading.Thread(target=one, args=(c, t)) for c in CLIENTS for t in ports]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return seen


def main() -> int:
    parser = argparse.ArgumentParser(description="Time slow and lying clients, app and nginx.")
    parser.add_argument("--limit", type=float, default=70.0, help="seconds a client waits at most")
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="edge-"))
    # The app's defaults: none of the settings variables of this shell.
    environment = {k: v for k, v in os.environ.items()
                   if k in ("PATH", "HOME", "LANG", "TMPDIR")}  # fmt: skip
    try:
        with contextlib.ExitStack() as stack:
            app = stack.enter_context(ImageServer(folder, environment))
            ports = {"app": app.port}
            if nginx_path():
                proxy = stack.enter_context(Proxy(f"127.0.0.1:{app.port}", folder / "proxy.log"))
                ports["nginx"] = proxy.port
            seen = measure(ports, options.limit)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if options.json:
        print(json.dumps({c: {t: asdict(o) | {"answer": o.answer[:12].decode("latin-1")}
                              for t, o in by.items()} for c, by in seen.items()}))  # fmt: skip
        return 0
    print(f"{'client':34} {'target':6} {'status':>6} {'answered s':>11} {'closed s':>9}")
    for client, by_target in seen.items():
        for target, outcome in by_target.items():
            answered = "-" if outcome.answered_after is None else f"{outcome.answered_after:.1f}"
            closed = "open" if outcome.closed_after is None else f"{outcome.closed_after:.1f}"
            status = outcome.status or "-"
            print(f"{client:34} {target:6} {status!s:>6} {answered:>11} {closed:>9}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
